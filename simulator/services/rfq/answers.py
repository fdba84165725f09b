"""What POST /v2/rfq/preview and POST /v2/rfq/request answer beyond the record: plain data whose
attributes are the answers' fields under their wire names (api/rfq/schemas.py validates the
wire models from them, as it does the record from StoredRfq). The service fills them in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from simulator.services.rfq.model import NoQuoteReason, RoutingState, StoredRfq
from simulator.services.rfq.pricing import PreviewOutcome
from simulator.services.rfq.trades import TradeSpec
from simulator.services.rfq.transactions import TransactionPair
from simulator.services.shared.amounts import rate_ray


@dataclass(frozen=True)
class ReservedElsewhere:
    """When another caller's live quote holds the liquidity a no-quote asked for."""

    reserved_until: float | None = None  # when that quote lapses
    retry_after_ms: int | None = None  # from the answer's time to then

    @classmethod
    def at(cls, now: float, until: float | None) -> ReservedElsewhere:
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

    @classmethod
    def of(
        cls, spec: TradeSpec, outcome: PreviewOutcome, reserved: ReservedElsewhere
    ) -> PreviewAnswer:
        """The price for `spec`, or the no-quote with `reserved` (a price reserves nothing)."""
        depth, price = outcome.depth, outcome.price
        if price is None:
            return cls(
                status="no_quote",
                routing=outcome.routing,
                available_sell_amount=depth.sell or None,
                available_buy_amount=depth.buy or None,
                reason=outcome.reason or "no_valid_quote",
                reserved_until=reserved.reserved_until,
                retry_after_ms=reserved.retry_after_ms,
            )
        return cls(
            status="preview",
            routing=outcome.routing,
            available_sell_amount=depth.sell or None,
            available_buy_amount=depth.buy or None,
            sell_amount=spec.sell_amount if spec.sell_amount is not None else price.taker_pays,
            buy_amount=price.buy_amount,
            fee_amount=price.fee,
            taker_pays=price.taker_pays,
            rate_ray=rate_ray(
                price.taker_pays, spec.sell.decimals, price.buy_amount, spec.buy.decimals
            ),
        )


@dataclass(frozen=True)
class RequestOutcome:
    """A firm request's answer: the record as it stands, and what only the answer carries."""

    record: StoredRfq
    claim_token: str  # returned exactly once; only its hash is stored
    maker_wait_s: float = 0.0  # time the auction waited for makers (Server-Timing `makers`)
    maker_waits_s: Mapping[str, float] = field(default_factory=dict)  # each maker's, by wallet
    transactions: TransactionPair | None = None  # a firm quote's approval and swap
    retry_after_ms: int | None = None  # a no-quote's wait until record.reserved_until
