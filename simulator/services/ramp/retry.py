"""Stalled payouts (spec 2-ramp-v2 "Reading", stalled payouts; docs/ramp.md).

Eligible when the transfer has sat at providerStatus funds_converted for 20 minutes, no earlier
retry is in flight, and the person has a provider profile with a known destination. The retry
creates a new transfer from the parked balance to the original destination; it carries
retryOfId and the original keeps its row and status.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

from pydantic import Field

from simulator.clock import Clock
from simulator.errors import InvalidRequest, NotFound
from simulator.randomness import RandomSource, secret_token
from simulator.services.ramp.access import RampGate, WalletCall
from simulator.services.ramp.failures import provider_failure
from simulator.services.ramp.model import TransferRecord, TransferStatus, new_record
from simulator.services.ramp.ports import (
    CustomerDirectory,
    Money,
    ProviderBalance,
    ProviderConflict,
    ProviderError,
    ProviderTransfer,
    ProviderUnreachable,
    RampProvider,
)
from simulator.services.ramp.store import TransferStore, claim_hash
from simulator.services.ramp.tracking import TransferTracker
from simulator.services.ramp.transfers import TransferCreation
from simulator.services.shared.state import StateSchema

log = logging.getLogger("rfqsim.ramp.retry")

RetryReason = Literal["not_stuck", "too_soon", "retry_in_flight", "no_profile", "no_destination"]
# RA55: a retry in these states no longer holds the payout, so another may start.
RETRY_ENDED: frozenset[TransferStatus] = frozenset({"FAILED", "REFUNDED", "CANCELLED", "EXPIRED"})


@dataclass(frozen=True)
class RetrySettings:
    retry_after_s: float = 1200.0  # spec: stuck at funds_converted for 20 minutes


@dataclass(frozen=True)
class Eligibility:
    """The check's answer under the spec's field names (api/ramp/transfer_schemas.py
    `RetryEligibility` is validated from it)."""

    eligible: bool
    reason: RetryReason | None  # None when eligible
    stuck_since: float | None  # unix seconds; None when not stuck
    stuck_for_ms: int
    wait_ms: int  # until eligible on time alone (0 once 20 minutes have passed, or not stuck)
    balance: ProviderBalance  # the customer's parked provider balance
    required: Money  # the original transfer's targetAmount
    covers: bool  # balance.available >= required.amount


def _covers(available: str, required: str) -> bool:
    try:
        return Decimal(available) >= Decimal(required)
    except InvalidOperation:
        return False


class RampRetries:
    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        gate: RampGate,
        customers: CustomerDirectory,
        store: TransferStore,
        tracker: TransferTracker,
        settings: RetrySettings,
    ) -> None:
        self._clock = clock
        self._random = random
        self._gate = gate
        self._customers = customers
        self._store = store
        self._tracker = tracker
        self.settings = settings
        # One lock per original transfer, guarding its retry from the eligibility check through
        # the provider call to the stored new transfer: two parallel retries cannot both book.
        self._locks: dict[str, asyncio.Lock] = {}
        # Original id -> our id of a retry whose provider call was never answered: the
        # next retry asks the provider for it by reference before booking another.
        self._unanswered: dict[str, str] = {}

    async def _admitted(
        self, transfer_id: str, call: WalletCall
    ) -> tuple[TransferRecord, RampProvider]:
        """Proof first (401), then the transfer must be the wallet's (404, RA55)."""
        provider = await self._gate.admit(call)
        record = self._store.get(transfer_id)
        if (
            record is None
            or record.wallet != call.wallet.lower()
            or record.provider != call.provider
        ):
            raise NotFound("No such transfer for this wallet")
        if record.chain_id != call.chain_id:
            raise InvalidRequest(
                f"chainId: the transfer is on chain {record.chain_id}",
                details={"reason": "chain_mismatch", "chainId": record.chain_id},
            )
        return record, provider

    async def check(self, transfer_id: str, call: WalletCall) -> Eligibility:
        record, provider = await self._admitted(transfer_id, call)
        return await self._eligibility(record, provider)

    async def _eligibility(self, record: TransferRecord, provider: RampProvider) -> Eligibility:
        await self._tracker.refresh(record)
        now = self._clock.time()
        required_currency = record.token if record.side == "buy" else record.fiat
        if record.customer_id is None:
            # Our business profile: nothing is parked for this person (and no_profile below).
            balance = ProviderBalance(available="0", currency=required_currency)
        else:
            try:
                balance = await provider.balance(record.customer_id)
            except ProviderError as exc:
                raise provider_failure(record.provider, exc) from exc
        stuck_since = record.stuck_since()
        stuck_for = max(0.0, now - stuck_since) if stuck_since is not None else 0.0
        wait = max(0.0, self.settings.retry_after_s - stuck_for) if stuck_since is not None else 0
        reason = self._reason(record, stuck_since, stuck_for)
        return Eligibility(
            eligible=reason is None,
            reason=reason,
            stuck_since=stuck_since,
            stuck_for_ms=int(stuck_for * 1000),
            wait_ms=int(wait * 1000),
            balance=balance,
            required=Money(record.target_amount, required_currency),
            # Amounts in two currencies (a sell's fiat target, a parked stablecoin) never cover.
            covers=balance.currency == required_currency
            and _covers(balance.available, record.target_amount),
        )

    def _reason(
        self, record: TransferRecord, stuck_since: float | None, stuck_for: float
    ) -> RetryReason | None:
        if stuck_since is None or record.status != "SENDING":
            return "not_stuck"
        if record.id in self._unanswered or any(
            r.status not in RETRY_ENDED for r in self._store.retries_of(record.id)
        ):
            return "retry_in_flight"
        customer = self._customers.record(record.provider, record.wallet)
        if record.customer_id is None or customer is None or not customer.provider_customer_id:
            return "no_profile"
        if record.side == "sell" or not record.pay_out.get("address"):
            # RA63: a retry pays the parked, converted stablecoin to the buy's wallet. A sell's
            # stalled leg is a bank payout in fiat: there is no on-chain destination to send a
            # parked balance to, and the provider refuses such a retry, so the check says so
            # instead of answering eligible for a retry that would then be refused.
            return "no_destination"
        if stuck_for < self.settings.retry_after_s:
            return "too_soon"
        return None

    async def retry(self, transfer_id: str, call: WalletCall) -> TransferCreation:
        record, provider = await self._admitted(transfer_id, call)
        lock = self._locks.setdefault(record.id, asyncio.Lock())
        async with lock:
            booked = await self._find_unanswered(record, provider)
            if booked is None:
                eligibility = await self._eligibility(record, provider)
                if eligibility.reason is not None:
                    raise InvalidRequest(
                        f"This transfer's payout cannot be retried now: {eligibility.reason}",
                        details={"reason": eligibility.reason},
                    )
                booked = await self._book(record, provider)
            new_id = booked.reference
            retry = new_record(
                booked,
                our_id=new_id,
                provider=record.provider,
                wallet=record.wallet,
                email=record.email,
                now=self._clock.time(),
                retry_of_id=record.id,
            )
            self._store.add(retry)
            self._tracker.started(retry)
            self._unanswered.pop(record.id, None)
            token = secret_token("rcl_", 32)
            retry.claim_hashes.add(claim_hash(token))
            log.info("payout retry %s of %s", retry.id, record.id)
            return TransferCreation(retry, token, replay=False)

    async def _book(self, record: TransferRecord, provider: RampProvider) -> ProviderTransfer:
        new_id = self._random.new_id("rtr")
        try:
            return await provider.retry_payout(record.provider_transfer_id, reference=new_id)
        except ProviderConflict as exc:
            if exc.existing is not None and exc.existing.reference == new_id:
                return exc.existing
            raise provider_failure(record.provider, exc) from exc
        except ProviderUnreachable as exc:
            self._unanswered[record.id] = new_id
            raise provider_failure(record.provider, exc) from exc
        except ProviderError as exc:
            raise provider_failure(record.provider, exc) from exc

    async def _find_unanswered(
        self, record: TransferRecord, provider: RampProvider
    ) -> ProviderTransfer | None:
        reference = self._unanswered.get(record.id)
        if reference is None:
            return None
        try:
            found = await provider.transfer_by_reference(reference)
        except ProviderError as exc:
            raise provider_failure(record.provider, exc) from exc
        if found is None:
            self._unanswered.pop(record.id, None)
        return found


class RetriesSaved(StateSchema):
    """What reset and snapshots put back of the payout retries: retries whose booking was
    never answered."""

    unanswered: dict[str, str] = Field(validation_alias="_unanswered")
