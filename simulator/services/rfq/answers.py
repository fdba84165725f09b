"""What POST /v2/rfq/preview and POST /v2/rfq/request answer beyond the record: plain data whose
attributes are the answers' fields under their wire names (api/rfq/schemas.py validates the
wire models from them, as it does the record from StoredRfq). The service fills them in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from simulator.services.rfq.model import NoQuoteReason, RoutingState, StoredRfq
from simulator.services.rfq.transactions import TransactionPair


@dataclass(frozen=True)
class Reservation:
    """When another caller's live quote holds the liquidity a no-quote asked for."""

    reserved_until: float | None = None  # when that quote lapses
    retry_after_ms: int | None = None  # from the answer's time to then

    @classmethod
    def at(cls, now: float, until: float | None) -> Reservation:
        if until is None or until <= now:
            return cls()
        return cls(until, int((until - now) * 1000))


@dataclass(frozen=True)
class PreviewAnswer:
    """An indicative price (status preview) or a no-quote; the amounts are None on a no-quote."""

    status: Literal["preview", "no_quote"]
    routing: RoutingState
    available_sell_amount: int | None  # published depth on each leg; None when there is none
    available_buy_amount: int | None
    reason: NoQuoteReason | None = None
    sell_amount: int | None = None  # the exact input asked for, else takerPays
    buy_amount: int | None = None
    fee_amount: int | None = None
    taker_pays: int | None = None
    rate_ray: int | None = None
    reserved_until: float | None = None
    retry_after_ms: int | None = None


@dataclass(frozen=True)
class RequestOutcome:
    """A firm request's answer: the record as it stands, and what only the answer carries."""

    record: StoredRfq
    claim_token: str  # returned exactly once; only its hash is stored
    maker_wait_s: float = 0.0  # time the auction waited for makers (Server-Timing `makers`)
    transactions: TransactionPair | None = None  # a firm quote's approval and swap
    retry_after_ms: int | None = None  # a no-quote's wait until record.reserved_until
