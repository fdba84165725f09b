"""Customer records, one per wallet per provider: registration (serialised per wallet), stored
details, KYC submission, the KYC review state (kyc/status, throttled) and the provider-hosted
verification link. Also the `CustomerDirectory` the transfer services read.

Spec 2-ramp-v2 "Customer", "KYC review state", "POST /v2/ramp/customers",
"POST /v2/ramp/customers/kyc", Limits (KYC re-read throttle); docs/ramp.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from simulator.clock import Clock
from simulator.errors import InvalidRequest, ServiceError
from simulator.randomness import RandomSource
from simulator.services.ramp.access import RampGate, WalletCall
from simulator.services.ramp.catalog import RampCatalog
from simulator.services.ramp.failures import provider_failure
from simulator.services.ramp.ports import (
    Capabilities,
    CustomerRecord,
    KycDocument,
    KycReview,
    Money,
    PersonDetails,
    ProviderConflict,
    ProviderError,
    ProviderRefused,
    ProviderUnreachable,
)
from simulator.services.shared.state import AsPairs, StateSchema

log = logging.getLogger("rfqsim.ramp.customers")

# RA7: why no profile was made when fewer than the four fields are known.
FEWER_FIELDS_REASON = (
    "firstName, lastName, email and phone are all needed to register an individual"
)

# RA9: the provider's review words -> the spec's states.
KYC_STATES = {
    "not_started": "unverified",
    "awaiting_review": "pending",
    "approved": "verified",
    "declined": "rejected",
    "expired": "expired",
}
VERIFIED = "approved"
PENDING = "awaiting_review"
NO_PROFILE = "no_profile"  # providerStatus of a record without a provider profile


def kyc_state(provider_status: str) -> str:
    state = KYC_STATES.get(provider_status)
    if state is None:
        # A word this simulator does not know: the review is neither cleared nor refused.
        log.warning("unknown provider review status %r; shown as pending", provider_status)
        return "pending"
    return state


@dataclass(frozen=True)
class KycView:
    """The spec's `kyc` object under its wire names (api/ramp/schemas.py `KycState` is
    validated from it, for the kyc reads and for `error.kyc` of 422 kyc_required)."""

    state: str  # unverified, pending, verified, rejected, expired
    provider_status: str  # the provider's own word
    rejection_reasons: tuple[str, ...]
    requirements_due: tuple[str, ...]
    level: str | None
    can_deposit: bool
    max_buy: Money  # the corridor's single-deposit cap, not a per-person limit

    @classmethod
    def of(cls, review: KycReview) -> KycView:
        return cls(
            state=kyc_state(review.status),
            provider_status=review.status,
            rejection_reasons=review.reasons,
            requirements_due=review.requirements_due,
            level=review.level,
            can_deposit=review.can_deposit,
            max_buy=Money(review.max_buy_amount, review.max_buy_currency),
        )

    @classmethod
    def without_profile(cls, caps: Capabilities) -> KycView:
        """A person the provider has no profile of: nothing reviewed, the details due."""
        return cls(
            state="unverified",
            provider_status=NO_PROFILE,
            rejection_reasons=(),
            requirements_due=("customerDetails",),
            level=None,
            can_deposit=False,
            max_buy=Money(caps.max_buy_amount, caps.max_buy_currency),
        )


@dataclass(frozen=True)
class CustomerView:
    """The spec's registration answer `customer`."""

    id: str
    kyc_status: str | None  # None before any review
    has_provider_customer: bool
    rejection_reason: str | None  # present when the profile was not created


@dataclass(frozen=True)
class CustomerSettings:
    kyc_reread_s: float = 15.0  # spec: provider re-read at most once per 15 s per person


def _merged(record: CustomerRecord, sent: PersonDetails) -> PersonDetails:
    """The four stored fields after this call, with what was sent forwarded as well."""
    return dataclasses.replace(
        sent,
        first_name=sent.first_name if sent.first_name is not None else record.first_name,
        last_name=sent.last_name if sent.last_name is not None else record.last_name,
        email=sent.email if sent.email is not None else record.email,
        phone=sent.phone if sent.phone is not None else record.phone,
    )


def _complete(details: PersonDetails) -> bool:
    return all(
        value is not None
        for value in (details.first_name, details.last_name, details.email, details.phone)
    )


def _anything_sent(details: PersonDetails) -> bool:
    return any(value is not None for value in dataclasses.astuple(details))


class RampCustomers:
    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        gate: RampGate,
        catalog: RampCatalog,
        settings: CustomerSettings,
    ) -> None:
        self._clock = clock
        self._random = random
        self._gate = gate
        self._catalog = catalog
        self.settings = settings
        self._records: dict[tuple[str, str], CustomerRecord] = {}  # (provider, wallet lower)
        # Guards one wallet's record across provider calls: registrations (so concurrent calls
        # make exactly one provider profile), KYC submissions and review re-reads (so the
        # throttle holds under concurrent readers).
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    def _lock(self, key: tuple[str, str]) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    # -- CustomerDirectory ---------------------------------------------------------------

    def record(self, provider: str, wallet: str) -> CustomerRecord | None:
        return self._records.get((provider, wallet.lower()))

    def records(self) -> list[CustomerRecord]:
        return list(self._records.values())

    async def current_kyc(self, record: CustomerRecord, fiat: str) -> KycReview | None:
        if record.provider_customer_id is None:
            return None
        async with self._lock((record.provider, record.wallet)):
            return await self._read_review(record, fiat)

    async def refresh_pending(self) -> int:
        read = 0
        for record in list(self._records.values()):
            review = record.kyc
            if record.provider_customer_id is None or review is None or review.status != PENDING:
                continue
            async with self._lock((record.provider, record.wallet)):
                if not self._reread_due(record):
                    continue
                try:
                    await self._fetch_review(record, review.max_buy_currency)
                except (ProviderError, ServiceError) as exc:
                    log.warning("background re-read of %s's review failed: %s", record.id, exc)
                else:
                    read += 1
        return read

    async def _fetch_review(self, record: CustomerRecord, fiat: str) -> KycReview:
        """One provider read of the review, stored on the record; raises the port's errors."""
        assert record.provider_customer_id is not None
        provider = self._catalog.provider(record.provider)
        review = await provider.kyc_review(record.provider_customer_id, fiat)
        record.kyc = review
        record.kyc_read_at = self._clock.time()
        return review

    async def _read_review(self, record: CustomerRecord, fiat: str) -> KycReview:
        try:
            return await self._fetch_review(record, fiat)
        except ProviderError as exc:
            raise provider_failure(record.provider, exc) from exc

    def _reread_due(self, record: CustomerRecord) -> bool:
        if record.kyc is None or record.kyc_read_at is None:
            return True
        if record.kyc.status == VERIFIED:
            return False  # spec: re-reads stop once verified (a buy re-reads: current_kyc)
        return self._clock.time() - record.kyc_read_at >= self.settings.kyc_reread_s

    # -- registration --------------------------------------------------------------------

    async def register(self, call: WalletCall, sent: PersonDetails) -> CustomerView:
        """POST /customers (acceptedTerms was checked by the schema: RA6). Serialised per wallet.
        Nothing is stored when the provider cannot be reached (502)."""
        provider = await self._gate.admit(call)
        async with self._lock(call.key):
            existing = self._records.get(call.key)
            now = self._clock.time()
            record = existing or CustomerRecord(
                provider=call.provider,
                wallet=call.wallet.lower(),
                id=self._random.new_id("rcu"),
                created_at=now,
            )
            details = _merged(record, sent)
            if record.provider_customer_id is not None:
                if _anything_sent(sent):
                    try:
                        await provider.update_customer(record.provider_customer_id, sent)
                    except ProviderError as exc:
                        # RA35: a refused update keeps the profile and the stored details.
                        raise provider_failure(call.provider, exc) from exc
            elif _complete(details):
                try:
                    customer = await provider.create_customer(
                        reference=call.wallet.lower(), kind="individual", details=details
                    )
                except ProviderRefused as exc:
                    record.rejection_reason = exc.message or "The provider declined this person"
                except ProviderError as exc:
                    raise provider_failure(call.provider, exc) from exc
                else:
                    record.provider_customer_id = customer.id
                    record.rejection_reason = None
            else:
                record.rejection_reason = FEWER_FIELDS_REASON
            record.first_name = details.first_name
            record.last_name = details.last_name
            record.email = details.email
            record.phone = details.phone
            record.updated_at = self._clock.time()
            self._records[call.key] = record
            return self._customer_view(record)

    def _customer_view(self, record: CustomerRecord) -> CustomerView:
        review = record.kyc
        started = review is not None and review.status != "not_started"
        return CustomerView(
            id=record.id,
            kyc_status=kyc_state(review.status) if review is not None and started else None,
            has_provider_customer=record.provider_customer_id is not None,
            rejection_reason=record.rejection_reason
            if record.provider_customer_id is None
            else None,
        )

    async def details(self, call: WalletCall) -> CustomerRecord | None:
        """POST /customers/details: the stored record, or None when nobody registered."""
        await self._gate.admit(call)
        return self._records.get(call.key)

    # -- KYC ------------------------------------------------------------------------------

    def _profiled(self, call: WalletCall, action: str) -> CustomerRecord:
        record = self._records.get(call.key)
        if record is None or record.provider_customer_id is None:
            raise InvalidRequest(
                f"{action} needs a provider profile: register the wallet with firstName, "
                "lastName, email and phone first (POST /v2/ramp/customers)",
                details={"reason": "no_provider_profile"},
            )
        return record

    async def submit_kyc(self, call: WalletCall, document: KycDocument) -> KycView:
        """POST /customers/kyc: forwards the documents (not kept); the review right after."""
        provider = await self._gate.admit(call)
        record = self._profiled(call, "Identity verification")
        assert record.provider_customer_id is not None
        async with self._lock(call.key):
            try:
                review = await provider.submit_kyc(record.provider_customer_id, document)
            except ProviderConflict:
                # RA64: a review is already pending or approved, so the provider takes no new
                # documents; the answer is the review as it stands, not an error.
                try:
                    fiat = (await self._catalog.capabilities(call.provider)).fiat
                    review = await provider.kyc_review(record.provider_customer_id, fiat)
                except ProviderError as exc:
                    raise provider_failure(call.provider, exc) from exc
            except ProviderError as exc:
                raise provider_failure(call.provider, exc) from exc
            record.kyc = review
            record.kyc_read_at = self._clock.time()
            record.updated_at = record.kyc_read_at
            return KycView.of(review)

    async def kyc_status(self, call: WalletCall, fiat: str) -> KycView | None:
        """POST /customers/kyc/status: None without a record; the provider is re-read at most
        once per `kyc_reread_s` per person and never once verified."""
        await self._gate.admit(call)
        record = self._records.get(call.key)
        if record is None:
            return None
        if record.provider_customer_id is None:
            return KycView.without_profile(await self._catalog.capabilities(call.provider))
        async with self._lock(call.key):
            if not self._reread_due(record):
                assert record.kyc is not None
                return KycView.of(record.kyc)
            try:
                review = await self._fetch_review(record, fiat)
            except ProviderUnreachable as exc:
                if record.kyc is not None:
                    return KycView.of(record.kyc)  # RA33: the last review read, not a 502
                raise provider_failure(call.provider, exc) from exc
            except ProviderError as exc:
                raise provider_failure(call.provider, exc) from exc
            return KycView.of(review)

    async def kyc_link(self, call: WalletCall) -> str:
        """POST /customers/kyc/link: the provider-hosted page; 400 without a profile."""
        provider = await self._gate.admit(call)
        record = self._profiled(call, "A verification link")
        assert record.provider_customer_id is not None
        try:
            return await provider.kyc_link(record.provider_customer_id)
        except ProviderError as exc:
            raise provider_failure(call.provider, exc) from exc


class CustomersSaved(StateSchema):
    """What reset and snapshots put back of the ramp's customers: every record, by provider
    and wallet."""

    records: Annotated[dict[tuple[str, str], CustomerRecord], AsPairs()] = Field(
        validation_alias="_records"
    )
