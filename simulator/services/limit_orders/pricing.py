"""Limit-order pricing (spec 3 "GET /v1/limit-orders/quote"): the reactor fee a resting order
carries, the smallest output able to carry it, the queue price computed exactly by the spec's
formula, and the fastFill price against the best filling market maker's bid. Pure integer
arithmetic; every rounding direction is stated.

Frames: the book rate is sellToken per buyToken (the maker's sellToken), the maker frame
buyToken per sellToken; both decimal-normalised and RAY-scaled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from simulator.services.shared.amounts import BPS, RAY, Curve, buy_for_sell, fee_on

QUEUE_EDGE_BPS = 2  # queue rests 2 bp above the best competing rate (the matcher's level is 1 bp)

FastFillUnavailable = Literal[
    "no_market_maker_bids", "exceeds_max_maker_capacity", "below_min_buy_amount"
]


def order_fee(buy_amount: int, fee_bps: int) -> int:
    """The reactor fee a resting order carries: the corridor's fee_bps of its output (buyAmount),
    rounded down, paid by whoever fills it on top of the output (decisions "v1 book")."""
    return fee_on(buy_amount, fee_bps)


def min_buy_amount(fee_bps: int) -> int:
    """The smallest output able to carry the reactor fee: the smallest buyAmount whose fee
    rounds to at least one atomic unit (any positive output when the fee is zero)."""
    return -(-BPS // fee_bps) if fee_bps else 1


def queue_rate(best_competing_rate: int) -> int:
    """bestCompetingRate * (1 + 2/10000) in the book orientation, rounded down."""
    return best_competing_rate * (BPS + QUEUE_EDGE_BPS) // BPS


@dataclass(frozen=True)
class PricePoint:
    buy_amount: int
    rate_ray: int  # maker frame


def queue_price(
    best_competing_rate: int | None,
    sell_amount: int,
    sell_decimals: int,
    buy_decimals: int,
    minimum: int,
) -> PricePoint | None:
    """Spec: buyAmount = floor(sellAmount * 10^buyDecimals * RAY / (queueRate *
    10^sellDecimals)); the reported rate is the maker-frame inverse RAY^2 / queueRate (rounded
    down). None when the side is empty or the buyAmount falls below `minimum`."""
    if not best_competing_rate:
        return None
    rate = queue_rate(best_competing_rate)
    buy = sell_amount * 10**buy_decimals * RAY // (rate * 10**sell_decimals)
    if buy < minimum:
        return None
    return PricePoint(buy_amount=buy, rate_ray=RAY * RAY // rate)


@dataclass(frozen=True)
class MakerDepth:
    makers: int  # filling market makers bidding in the direction
    total_capacity: int  # sum of their depths, in sellToken (atomic)
    max_maker_capacity: int  # the largest single depth: the whole-order ceiling


@dataclass(frozen=True)
class FastFillPrice:
    buy_amount: int
    rate_ray: int  # maker frame
    margin_bps: int
    bid_wallet: str  # the market maker whose bid it crosses


@dataclass(frozen=True)
class FastFillOutcome:
    depth: MakerDepth
    price: FastFillPrice | None
    reason: FastFillUnavailable | None


def fast_fill(
    bids: Sequence[tuple[str, Curve]],
    sell_amount: int,
    sell_decimals: int,
    buy_decimals: int,
    *,
    fee_bps: int,
    margin_bps: int,
    minimum: int,
) -> FastFillOutcome:
    """Cross the best bid among `bids` (wallet, published levels of the direction: a taker
    selling the order's sellToken receives buyToken) that can take the whole order. The order
    asks buyAmount = floor(bid * 10000 / (10000 + fee_bps + margin_bps)): the filler pays the
    output plus the reactor fee and keeps at least marginBps, so the order is priced at or
    better than the bid and the filler takes it."""
    depths = [curve[-1][0] for _, curve in bids if curve]
    depth = MakerDepth(
        makers=len(depths),
        total_capacity=sum(depths),
        max_maker_capacity=max(depths, default=0),
    )
    if not depths:
        return FastFillOutcome(depth, None, "no_market_maker_bids")
    best: tuple[int, str] | None = None
    for wallet, curve in bids:
        bid = buy_for_sell(curve, sell_amount) if curve else None
        if bid is not None and (best is None or bid > best[0]):
            best = (bid, wallet)
    if best is None:
        return FastFillOutcome(depth, None, "exceeds_max_maker_capacity")
    buy = best[0] * BPS // (BPS + fee_bps + margin_bps)
    if buy < minimum:
        return FastFillOutcome(depth, None, "below_min_buy_amount")
    rate = sell_amount and buy * RAY * 10**sell_decimals // (sell_amount * 10**buy_decimals)
    return FastFillOutcome(depth, FastFillPrice(buy, rate, margin_bps, best[1]), None)
