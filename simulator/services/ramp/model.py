"""The ramp transfer record, its statuses and the forward-only rules that move it (spec 2-ramp-v2
"States and transitions"; docs/ramp.md).

Everything here is plain data and pure functions: the services that read the provider (webhooks,
re-checks, the sweep) all funnel what they saw through `observe()`, which is the only place a
transfer's status or providerStatus changes after creation (besides `expire()`, the background
expiry). `new_record()` builds a stored transfer from the provider's booking (a create, a payout
retry).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from simulator.services.ramp.ports import ProviderTransfer, Side

TransferStatus = Literal[
    "AWAITING_FUNDS",
    "PROCESSING",
    "SENDING",
    "COMPLETED",
    "FAILED",
    "REFUNDED",
    "CANCELLED",
    "EXPIRED",
]
STATUSES: tuple[TransferStatus, ...] = (
    "AWAITING_FUNDS",
    "PROCESSING",
    "SENDING",
    "COMPLETED",
    "FAILED",
    "REFUNDED",
    "CANCELLED",
    "EXPIRED",
)
SETTLED: frozenset[TransferStatus] = frozenset({"COMPLETED", "REFUNDED", "CANCELLED"})
# The statuses whose arrival sends the `result` email: every end of the happy and unhappy
# paths, settled or not.
RESULT_STATUSES: frozenset[TransferStatus] = frozenset(
    {"COMPLETED", "FAILED", "REFUNDED", "CANCELLED", "EXPIRED"}
)

# RA15: the provider's word -> our status.
PROVIDER_STATUS_MAP: dict[str, TransferStatus] = {
    "awaiting_funds": "AWAITING_FUNDS",
    "funds_received": "PROCESSING",
    "funds_converted": "SENDING",
    "outgoing_payment_sent": "SENDING",
    "completed": "COMPLETED",
    "failed": "FAILED",
    "refunded": "REFUNDED",
    "cancelled": "CANCELLED",
}
# How far along the provider's own words are; a word never replaces a higher-ranked one, so a
# stale webhook carrying funds_converted cannot undo outgoing_payment_sent within SENDING.
PROVIDER_STATUS_RANK: dict[str, int] = {
    "awaiting_funds": 0,
    "funds_received": 1,
    "funds_converted": 2,
    "outgoing_payment_sent": 3,
    "completed": 4,
    "failed": 4,
    "cancelled": 4,
    "refunded": 5,
}
# Provider words that mean the money has arrived at the provider (the funds_received email).
FUNDS_ARRIVED: frozenset[str] = frozenset(
    {"funds_received", "funds_converted", "outgoing_payment_sent", "completed"}
)

# Direct edges of the spec's transition table plus RA16 (origins of FAILED and CANCELLED, and
# EXPIRED's late outcomes). EXPIRED is entered only by the background expiry, never by a
# provider word. A provider observation may jump several edges at once (a webhook was lost and a
# re-check sees a later state), so what is allowed is everything reachable (`reachable()`).
EDGES: dict[TransferStatus, frozenset[TransferStatus]] = {
    "AWAITING_FUNDS": frozenset({"PROCESSING", "FAILED", "CANCELLED", "EXPIRED"}),
    "PROCESSING": frozenset({"SENDING", "FAILED", "CANCELLED"}),
    "SENDING": frozenset({"COMPLETED", "FAILED"}),
    "FAILED": frozenset({"REFUNDED"}),
    "EXPIRED": frozenset({"COMPLETED", "FAILED"}),
    "COMPLETED": frozenset(),
    "REFUNDED": frozenset(),
    "CANCELLED": frozenset(),
}


def reachable(start: TransferStatus) -> frozenset[TransferStatus]:
    """Every status reachable from `start` through one or more edges (the graph is acyclic)."""
    seen: set[TransferStatus] = set()
    stack = list(EDGES[start])
    while stack:
        status = stack.pop()
        if status not in seen:
            seen.add(status)
            stack.extend(EDGES[status])
    return frozenset(seen)


# From each status, where a provider observation may take it (EXPIRED only by expire()).
FORWARD: dict[TransferStatus, frozenset[TransferStatus]] = {
    status: reachable(status) - {"EXPIRED"} for status in STATUSES
}


def can_move(current: TransferStatus, new: TransferStatus) -> bool:
    return new in FORWARD[current]


@dataclass(frozen=True)
class TimelineEntry:
    status: TransferStatus
    provider_status: str
    at: float  # unix seconds: when the simulator observed it


@dataclass(frozen=True)
class PayoutAccount:
    """A sell's payout bank account, as the user gave it (and as the provider registered it)."""

    bank_code: str
    account_number: str
    account_name: str


@dataclass(frozen=True)
class Fingerprint:
    """What makes two creates with one intentKey 'the same request'."""

    provider: str
    side: Side
    fiat: str
    token: str
    chain_id: int
    wallet: str  # lowercase
    amount: Decimal
    sandbox: bool
    payout: tuple[str, str] | None  # (bankCode, accountNumber) on a sell


@dataclass
class TransferRecord:
    """One ramp transfer as the simulator keeps it; mutated only by the ramp services."""

    id: str  # ours (rtr_...), the provider's `reference`
    provider: str  # provider id
    provider_transfer_id: str  # the provider's id (receipts, support)
    sandbox: bool  # booked on the provider's test account
    side: Side
    fiat: str  # fiat code
    token: str  # token code
    chain_id: int
    wallet: str  # lowercase; buy: destination, sell: sending and refund wallet
    intent_key: str | None  # the create's intentKey (None for a payout retry)
    source_amount: str  # decimal, fiat on a buy, token on a sell
    target_amount: str  # decimal, what the user receives after the provider's fee
    rate_label: str  # display strings for the receipt
    fee_label: str
    status: TransferStatus
    provider_status: str  # the provider's last word we accepted
    pay_in: dict[str, Any]  # what the user must do (provider's object)
    pay_out: dict[str, Any]  # where the result goes (buy: blockchain_hash once completed)
    email: str | None  # where status emails go (body email, else the customer record's)
    customer_id: str | None  # provider customer id; None: our business profile (sell)
    recipient_id: str | None  # provider payout recipient (sell)
    expires_at: float  # end of the payment window (unix seconds)
    created_at: float
    state_at: float  # when the stored state was last confirmed by the provider (RA22 8 s)
    retry_of_id: str | None = None  # our id of the original transfer, on a payout retry
    checked_at: float = 0.0  # when we last asked the provider (throttle, even if it failed)
    timeline: list[TimelineEntry] = field(default_factory=list)  # every change
    claim_hashes: set[str] = field(default_factory=set)  # sha256 of every claim token issued
    emails_sent: set[str] = field(default_factory=set)  # kinds already sent (once each)
    fingerprint: Fingerprint | None = None  # the create request's identity

    @property
    def settled(self) -> bool:
        return self.status in SETTLED

    @property
    def has_email(self) -> bool:
        return self.email is not None

    def record_timeline(self, at: float) -> None:
        self.timeline.append(TimelineEntry(self.status, self.provider_status, at))

    def stuck_since(self) -> float | None:
        """When the timeline first shows providerStatus funds_converted, while it still does."""
        if self.provider_status != "funds_converted":
            return None
        return next((e.at for e in self.timeline if e.provider_status == "funds_converted"), None)


def new_record(
    booked: ProviderTransfer,
    *,
    our_id: str,
    provider: str,
    wallet: str,
    email: str | None,
    now: float,
    retry_of_id: str | None = None,
) -> TransferRecord:
    """A stored transfer from the provider's booking; its first timeline entry is now."""
    status = PROVIDER_STATUS_MAP.get(booked.status, "AWAITING_FUNDS")
    record = TransferRecord(
        id=our_id,
        provider=provider,
        provider_transfer_id=booked.id,
        sandbox=booked.sandbox,
        side=booked.side,
        fiat=booked.fiat,
        token=booked.token,
        chain_id=booked.chain_id,
        wallet=wallet.lower(),
        intent_key=None,
        source_amount=booked.source_amount,
        target_amount=booked.target_amount,
        rate_label=booked.rate_label,
        fee_label=booked.fee_label,
        status=status,
        provider_status=booked.status,
        pay_in=dict(booked.pay_in),
        pay_out=dict(booked.pay_out),
        email=email,
        customer_id=booked.customer_id,
        recipient_id=booked.recipient_id,
        expires_at=booked.expires_at,
        created_at=now,
        state_at=now,
        retry_of_id=retry_of_id,
    )
    record.record_timeline(now)
    return record


@dataclass(frozen=True)
class Observation:
    """What applying one provider view did to a record."""

    applied: bool  # the view was taken (possibly without any change)
    changed: bool  # status or providerStatus changed (a timeline entry was added)
    previous_status: TransferStatus
    reason: str = ""  # why a view was ignored (logged)


def observe(record: TransferRecord, seen: ProviderTransfer, at: float) -> Observation:
    """Apply the provider's view of a transfer, forward only.

    - a settled transfer never changes again;
    - an unknown provider word is ignored;
    - the provider's word moves forward only (a stale webhook changes nothing);
    - the status moves only along the allowed graph; while EXPIRED, intermediate words update
      providerStatus and the timeline but the status waits for a terminal word.
    """
    previous = record.status
    if record.settled:
        return Observation(False, False, previous, "settled")
    word = seen.status
    mapped = PROVIDER_STATUS_MAP.get(word)
    if mapped is None:
        return Observation(False, False, previous, f"unknown provider status {word!r}")
    rank = PROVIDER_STATUS_RANK[word]
    current_rank = PROVIDER_STATUS_RANK.get(record.provider_status, -1)
    if mapped == record.status or (record.status == "EXPIRED" and mapped in _IN_PROGRESS):
        if rank < current_rank or (rank == current_rank and word != record.provider_status):
            return Observation(False, False, previous, f"stale provider status {word!r}")
        new_status = record.status
    elif can_move(record.status, mapped):
        new_status = mapped
    else:
        return Observation(
            False, False, previous, f"backwards or forbidden: {record.status} -> {mapped}"
        )
    changed = new_status != record.status or word != record.provider_status
    record.status = new_status
    record.provider_status = word
    if seen.pay_out:
        # Merged: what we know (a sell's payout account) stays; the provider adds to it (a
        # buy's blockchain_hash once completed).
        record.pay_out = {**record.pay_out, **seen.pay_out}
    record.state_at = at
    if changed:
        record.record_timeline(at)
    return Observation(True, changed, previous)


_IN_PROGRESS: frozenset[TransferStatus] = frozenset({"AWAITING_FUNDS", "PROCESSING", "SENDING"})


def expire(record: TransferRecord, at: float) -> bool:
    """The background expiry: AWAITING_FUNDS with nothing received -> EXPIRED."""
    if record.status != "AWAITING_FUNDS" or record.provider_status != "awaiting_funds":
        return False
    record.status = "EXPIRED"
    record.record_timeline(at)
    return True


# RA12: a human decimal string; the currency's decimals are checked separately.
DECIMAL_PATTERN = r"^(0|[1-9][0-9]{0,29})(\.[0-9]{1,36})?$"
_DECIMAL = re.compile(DECIMAL_PATTERN)


class AmountError(ValueError):
    """A decimal string breaking RA12; the message says which rule."""


def parse_amount(value: str, decimals: int) -> Decimal:
    """A positive decimal with at most `decimals` fraction digits."""
    if not _DECIMAL.fullmatch(value):
        raise AmountError("must be a decimal string like 1500 or 1500.50")
    try:
        amount = Decimal(value)
    except InvalidOperation as exc:  # pragma: no cover - the pattern admits only valid decimals
        raise AmountError("must be a decimal string") from exc
    if amount <= 0:
        raise AmountError("must be greater than zero")
    _, _, fraction = value.partition(".")
    if len(fraction) > decimals:
        raise AmountError(f"at most {decimals} decimal places")
    return amount


DRIFT_BOUND = Decimal("0.01")  # the spec's 1 % price drift bound


def drift(expected: Decimal, actual: Decimal) -> Decimal:
    """|actual - expected| / expected (expected > 0)."""
    return abs(actual - expected) / expected


def drifted(expected: Decimal, actual: Decimal, bound: Decimal = DRIFT_BOUND) -> bool:
    """RA14: more than 1 % away from what the user was shown stops the create."""
    return drift(expected, actual) > bound
