"""Ramp transfers: creation in one call (spec 2-ramp-v2 "POST /v2/ramp/transfers"; the decisions
in docs/ramp.md). Reading them is services/ramp/reads.py.

Creation order: request shape (400) -> sandbox flag (400) -> proof (401) ->
intentKey (replay, 502 in flight, 400 reused) -> provider known (404) -> capability (403) ->
customer record (400) -> profile (409) -> KYC on a buy (422) -> payout recipient on a sell (422) ->
quote -> drift (409, nothing booked) -> the provider transfer, with our id as its reference
(422/502) -> stored, claim token, instructions email.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from simulator.clock import Clock
from simulator.errors import (
    InvalidRequest,
    KycRequired,
    QuoteDrift,
    RampCustomerRequired,
    ServiceError,
    UpstreamError,
)
from simulator.randomness import RandomSource, secret_token
from simulator.services.ramp.access import RampGate, WalletCall
from simulator.services.ramp.catalog import RampCatalog
from simulator.services.ramp.customers import VERIFIED, KycView
from simulator.services.ramp.emails import Outbox
from simulator.services.ramp.failures import provider_failure
from simulator.services.ramp.model import (
    DRIFT_BOUND,
    AmountError,
    Fingerprint,
    PayoutAccount,
    TransferRecord,
    drifted,
    new_record,
    parse_amount,
)
from simulator.services.ramp.ports import (
    Capabilities,
    CustomerDirectory,
    CustomerRecord,
    ProviderConflict,
    ProviderError,
    ProviderNotFound,
    ProviderRecipient,
    ProviderTransfer,
    ProviderUnreachable,
    RampProvider,
    Side,
)
from simulator.services.ramp.store import Intent, RegisteredRecipient, TransferStore, claim_hash
from simulator.services.ramp.tracking import TransferTracker

log = logging.getLogger("rfqsim.ramp.transfers")

DEFAULT_DECIMALS = {"NGN": 2, "NGNS": 6}  # RA12; settings add every chain token's decimals
UNKNOWN_DECIMALS = 18  # a currency nobody offers fails the capability check (403) anyway


@dataclass(frozen=True)
class PayoutRequest:
    """A sell's payout as sent (spec: from the banks step; providerRecipientId after drift)."""

    bank_code: str
    account_number: str
    account_name: str
    provider_recipient_id: str | None = None

    @property
    def account(self) -> PayoutAccount:
        return PayoutAccount(self.bank_code, self.account_number, self.account_name)


@dataclass(frozen=True)
class CreateRequest:
    call: WalletCall  # provider, wallet, chainId, proof, caller, sandbox
    side: Side
    fiat: str
    token: str
    amount: str  # decimal string, the side's source currency
    intent_key: str  # 12-64 of [A-Za-z0-9_-] (checked by the schema)
    email: str | None = None
    accepted_terms: bool | None = None
    expected_target_amount: str | None = None
    payout: PayoutRequest | None = None


@dataclass(frozen=True)
class TransferCreation:
    record: TransferRecord
    claim_token: str  # fresh on every answer, never stored in clear
    replay: bool  # an idempotent replay of an earlier create


@dataclass(frozen=True)
class TransferSettings:
    drift_bound: Decimal = DRIFT_BOUND  # spec: 1 %


class RampTransfers:
    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        gate: RampGate,
        catalog: RampCatalog,
        customers: CustomerDirectory,
        store: TransferStore,
        tracker: TransferTracker,
        outbox: Outbox,
        settings: TransferSettings,
        decimals: Mapping[str, int] | None = None,
    ) -> None:
        self._clock = clock
        self._random = random
        self._gate = gate
        self._catalog = catalog
        self._customers = customers
        self.store = store
        self.tracker = tracker
        self.outbox = outbox
        self.settings = settings
        self._decimals = {**DEFAULT_DECIMALS, **(decimals or {})}

    # -- creation --------------------------------------------------------------------------

    def _decimals_of(self, currency: str) -> int:
        return self._decimals.get(currency.upper(), UNKNOWN_DECIMALS)

    def _check_shape(self, request: CreateRequest) -> Fingerprint:
        """The rules pydantic cannot know (RA12, sell payout, acceptedTerms): 400."""
        source = request.fiat if request.side == "buy" else request.token
        target = request.token if request.side == "buy" else request.fiat
        try:
            amount = parse_amount(request.amount, self._decimals_of(source))
        except AmountError as exc:
            raise InvalidRequest.for_field("amount", str(exc)) from exc
        if request.expected_target_amount is not None:
            try:
                parse_amount(request.expected_target_amount, self._decimals_of(target))
            except AmountError as exc:
                raise InvalidRequest.for_field("expectedTargetAmount", str(exc)) from exc
        if request.accepted_terms is False:
            raise InvalidRequest.for_field(
                "acceptedTerms", "must be true: the provider's terms were not accepted"
            )
        if request.side == "sell" and request.payout is None:
            raise InvalidRequest.for_field(
                "payout", "a sell needs payout {bankCode, accountNumber, accountName}", "missing"
            )
        if request.side == "buy" and request.payout is not None:
            raise InvalidRequest.for_field(
                "payout", "payout is for sells only; a buy pays out to wallet"
            )
        call = request.call
        return Fingerprint(
            provider=call.provider,
            side=request.side,
            fiat=request.fiat.upper(),
            token=request.token.upper(),
            chain_id=call.chain_id,
            wallet=call.wallet.lower(),
            amount=amount,
            sandbox=call.sandbox,
            payout=(request.payout.bank_code, request.payout.account_number)
            if request.payout is not None
            else None,
        )

    def _claim(self, record: TransferRecord) -> str:
        token = secret_token("rcl_", 32)
        record.claim_hashes.add(claim_hash(token))
        return token

    def _take_intent(self, key: str, fingerprint: Fingerprint) -> Intent | TransferCreation:
        """No await between the look-up and the write, so parallel creates with one key
        cannot both pass: the first marks the key in flight, the others see the mark."""
        intent = self.store.intents.get(key)
        if intent is None:
            intent = Intent(fingerprint, self._random.new_id("rtr"), "in_flight")
            self.store.intents[key] = intent
            return intent
        if intent.fingerprint != fingerprint:
            raise InvalidRequest(
                "intentKey was already used for a different transfer; use a new intentKey",
                details={"reason": "intent_key_reused"},
            )
        if intent.state == "in_flight":
            raise UpstreamError(
                "A create with this intentKey is still in flight; retry with the same intentKey",
                details={"reason": "intent_in_flight"},
            )
        if intent.state == "booked":
            record = self.store.records[intent.transfer_id]
            return TransferCreation(record, self._claim(record), replay=True)
        intent.state = "in_flight"  # idle: an earlier booking call was never answered
        return intent

    async def create(self, request: CreateRequest) -> TransferCreation:
        fingerprint = self._check_shape(request)
        provider = await self._gate.admit(request.call)
        taken = self._take_intent(request.intent_key, fingerprint)
        if isinstance(taken, TransferCreation):
            log.debug("replay of %s for intentKey %s", taken.record.id, request.intent_key)
            return taken
        intent = taken
        try:
            booked = None
            if intent.maybe_booked:
                booked = await self._lookup(provider, request.call.provider, intent)
            recipient = None
            if booked is None:
                booked, recipient = await self._book(provider, request, intent)
        except BaseException:
            if intent.maybe_booked:
                intent.state = "idle"  # keep the id: the next attempt asks the provider first
            else:
                del self.store.intents[request.intent_key]  # nothing booked: the key is free
            raise
        record = self._store(booked, request, intent, recipient)
        intent.state = "booked"
        token = self._claim(record)
        self.outbox.instructions(record, token)
        return TransferCreation(record, token, replay=False)

    async def _lookup(
        self, provider: RampProvider, provider_id: str, intent: Intent
    ) -> ProviderTransfer | None:
        """RA54: after a booking call that was never answered, ask the provider by reference."""
        try:
            found = await provider.transfer_by_reference(intent.transfer_id)
        except ProviderError as exc:
            raise provider_failure(provider_id, exc) from exc
        if found is None:
            intent.maybe_booked = False
        return found

    async def _book(
        self, provider: RampProvider, request: CreateRequest, intent: Intent
    ) -> tuple[ProviderTransfer, ProviderRecipient | None]:
        call = request.call
        caps = await self._catalog.require_capability(
            call.provider,
            side=request.side,
            fiat=request.fiat,
            token=request.token,
            chain_id=call.chain_id,
            sandbox=call.sandbox,
        )
        customer = self._customer(call, request.side, caps)
        customer_id = customer.provider_customer_id
        if request.side == "buy":
            await self._require_kyc(customer, caps)
        recipient = None
        if request.side == "sell":
            assert request.payout is not None
            recipient = await self._recipient(provider, call, customer_id, request.payout)
        try:
            quote = await provider.quote(
                side=request.side,
                fiat=caps.fiat,
                token=caps.token,
                chain_id=call.chain_id,
                amount=request.amount,
                sandbox=call.sandbox,
            )
        except ProviderError as exc:
            raise provider_failure(call.provider, exc) from exc
        if request.expected_target_amount is not None and drifted(
            Decimal(request.expected_target_amount),
            Decimal(quote.target_amount),
            self.settings.drift_bound,
        ):
            raise QuoteDrift(
                expected_target_amount=request.expected_target_amount,
                actual_target_amount=quote.target_amount,
                rate_label=quote.rate_label,
                fee_label=quote.fee_label,
                provider_recipient_id=recipient.recipient_id if recipient else None,
            )
        try:
            booked = await provider.create_transfer(
                quote_id=quote.quote_id,
                reference=intent.transfer_id,
                customer_id=customer_id,
                chain_id=call.chain_id,
                sandbox=call.sandbox,
                destination_address=call.wallet if request.side == "buy" else None,
                recipient_id=recipient.recipient_id if recipient else None,
                refund_address=call.wallet if request.side == "sell" else None,
            )
        except ProviderConflict as exc:
            if exc.existing is not None and exc.existing.reference == intent.transfer_id:
                return exc.existing, recipient  # booked by an attempt whose answer we never got
            raise provider_failure(call.provider, exc) from exc
        except ProviderUnreachable as exc:
            # The booking may or may not exist now: keep the key's id so the next attempt asks
            # the provider for it by reference instead of booking a second transfer.
            intent.maybe_booked = True
            raise provider_failure(call.provider, exc) from exc
        except ProviderError as exc:
            raise provider_failure(call.provider, exc) from exc
        return booked, recipient

    def _customer(self, call: WalletCall, side: Side, caps: Capabilities) -> CustomerRecord:
        record = self._customers.record(call.provider, call.wallet)
        if record is None:
            raise InvalidRequest(
                "This wallet has no customer record with the provider; register it first "
                "(POST /v2/ramp/customers)",
                details={"reason": "no_customer_record"},
            )
        if record.provider_customer_id is None:
            if side == "buy":
                raise RampCustomerRequired(
                    "A buy needs a registered person: send firstName, lastName, email and phone "
                    "to POST /v2/ramp/customers",
                    details={"reason": "no_provider_profile"},
                )
            if not caps.business_profile_sells:
                raise RampCustomerRequired(
                    "The provider takes sells only from registered persons now",
                    details={"reason": "business_profile_sells_off"},
                )
        return record

    async def _require_kyc(self, customer: CustomerRecord, caps: Capabilities) -> None:
        """RA9/RA10: a fresh provider read of the review; verified and canDeposit, else 422."""
        review = await self._customers.current_kyc(customer, caps.fiat)
        if review is not None and review.status == VERIFIED and review.can_deposit:
            return
        kyc = KycView.without_profile(caps) if review is None else KycView.of(review)
        raise KycRequired(kyc)

    async def _recipient(
        self,
        provider: RampProvider,
        call: WalletCall,
        customer_id: str | None,
        payout: PayoutRequest,
    ) -> ProviderRecipient:
        """Reuse a recipient we registered for this wallet and account (after quote_drift), or
        register the payout account with the provider (422 when it declines)."""
        wallet = call.wallet.lower()
        if payout.provider_recipient_id is not None:
            known = self.store.recipients.get((call.provider, payout.provider_recipient_id))
            if known is None or known.wallet != wallet or known.account != payout.account:
                raise InvalidRequest.for_field(
                    "payout.providerRecipientId",
                    "not a recipient registered for this wallet and bank account",
                )
            return ProviderRecipient(
                recipient_id=payout.provider_recipient_id,
                bank_code=known.account.bank_code,
                bank_name=known.bank_name,
                account_number=known.account.account_number,
                account_name=known.account.account_name,
            )
        try:
            recipient = await provider.create_recipient(
                customer_id=customer_id,
                bank_code=payout.bank_code,
                account_number=payout.account_number,
                account_name=payout.account_name,
            )
        except ProviderNotFound as exc:
            raise InvalidRequest.for_field(
                "payout.bankCode", "unknown bank; use a code from GET /v2/ramp/banks"
            ) from exc
        except ProviderError as exc:
            raise provider_failure(call.provider, exc) from exc
        self.store.recipients[(call.provider, recipient.recipient_id)] = RegisteredRecipient(
            provider=call.provider,
            wallet=wallet,
            account=payout.account,
            bank_name=recipient.bank_name,
        )
        return recipient

    def _store(
        self,
        booked: ProviderTransfer,
        request: CreateRequest,
        intent: Intent,
        recipient: ProviderRecipient | None,
    ) -> TransferRecord:
        call = request.call
        customer = self._customers.record(call.provider, call.wallet)
        email = request.email or (customer.email if customer is not None else None)
        record = new_record(
            booked,
            our_id=intent.transfer_id,
            provider=call.provider,
            wallet=call.wallet,
            email=email,
            now=self._clock.time(),
        )
        record.intent_key = request.intent_key
        record.fingerprint = intent.fingerprint
        if recipient is not None:
            # RA20: a sell's payOut is the registered payout account, whatever else the
            # provider's own object carries.
            record.pay_out = {
                **record.pay_out,
                "type": "bank_account",
                "bankCode": recipient.bank_code,
                "bankName": recipient.bank_name,
                "accountNumber": recipient.account_number,
                "accountName": recipient.account_name,
            }
        self.store.add(record)
        self.tracker.started(record)
        log.debug("created %s (%s) for %s", record.id, record.provider_transfer_id, record.wallet)
        return record


__all__ = [
    "CreateRequest",
    "PayoutRequest",
    "RampTransfers",
    "ServiceError",
    "TransferCreation",
    "TransferSettings",
]
