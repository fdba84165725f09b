"""Limit-order pricing: the fee and minBuyAmount, the queue formula exactly as the spec writes
it, fastFill against the filling bids, and both rate frames with 6- and 18-decimal tokens."""

from __future__ import annotations

import pytest

from simulator.services.limit_orders.model import book_rate, execution_rate
from simulator.services.limit_orders.pricing import (
    fast_fill,
    min_buy_amount,
    order_fee,
    queue_price,
    queue_rate,
)
from simulator.services.shared.amounts import BPS, RAY, fee_on


@pytest.mark.parametrize("fee_bps", [1, 3, 5, 7, 30, 1000])
def test_min_buy_amount_is_the_smallest_output_with_a_fee(fee_bps: int) -> None:
    minimum = min_buy_amount(fee_bps)
    assert order_fee(minimum, fee_bps) >= 1
    assert order_fee(minimum - 1, fee_bps) == 0


def test_min_buy_amount_without_a_fee_is_one_unit() -> None:
    assert min_buy_amount(0) == 1


def test_order_fee_is_the_corridor_fee_of_the_output_rounded_down() -> None:
    assert order_fee(1_000_000, 5) == 500
    assert order_fee(1_999, 5) == 0
    assert order_fee(12_345_678, 5) == fee_on(12_345_678, 5) == 6172


def test_queue_follows_the_spec_formula_with_the_two_bp_edge() -> None:
    best = 1600 * RAY  # NGNS (6 dp) per USDC (6 dp)
    sell = 1_000 * 10**6  # the maker sells 1000 NGNS
    point = queue_price(best, sell, 6, 6, minimum=2000)
    assert point is not None
    q = best * (BPS + 2) // BPS
    assert queue_rate(best) == q
    assert point.buy_amount == sell * 10**6 * RAY // (q * 10**6)
    assert point.rate_ray == RAY * RAY // q
    # The "equivalently" of the spec, within rounding.
    again = sell * point.rate_ray * 10**6 // (RAY * 10**6)
    assert abs(again - point.buy_amount) <= 1
    # Resting 2 bp above the best means a better book rate than the best order.
    assert book_rate(sell, 6, point.buy_amount, 6) > best


def test_queue_with_mixed_decimals() -> None:
    best = 1600 * RAY  # NGNS (6 dp) per USDT (18 dp)
    sell = 800 * 10**6  # 800 NGNS
    point = queue_price(best, sell, 6, 18, minimum=2000)
    assert point is not None
    q = queue_rate(best)
    assert point.buy_amount == sell * 10**18 * RAY // (q * 10**6)
    assert point.buy_amount == pytest.approx(0.5 * 10**18 / 1.0002, rel=1e-9)


def test_queue_is_null_on_an_empty_side_or_below_min_buy_amount() -> None:
    assert queue_price(None, 10**6, 6, 6, minimum=2000) is None
    assert queue_price(1600 * RAY, 1600, 6, 6, minimum=2000) is None  # 1 atomic USDC


def test_both_frames_with_six_and_eighteen_decimals() -> None:
    # Maker sells 1 USDT (18 dp) for 1600 NGNS (6 dp).
    assert execution_rate(10**18, 18, 1600 * 10**6, 6) == 1600 * RAY  # NGNS per USDT
    assert book_rate(10**18, 18, 1600 * 10**6, 6) == RAY // 1600  # USDT per NGNS
    # Maker sells 1600 NGNS (6 dp) for 1 USDT (18 dp).
    assert execution_rate(1600 * 10**6, 6, 10**18, 18) == RAY // 1600
    assert book_rate(1600 * 10**6, 6, 10**18, 18) == 1600 * RAY


def test_fast_fill_crosses_the_best_bid_able_to_take_the_whole_order() -> None:
    sell = 1000 * 10**6  # NGNS
    small = ("0xsmall", [(500 * 10**6, 320_000)])  # cannot take 1000 NGNS
    wide = ("0xwide", [(5000 * 10**6, 3_000_000)])  # 0.0006 USDC per NGNS
    tight = ("0xtight", [(2000 * 10**6, 1_240_000)])  # 0.00062
    outcome = fast_fill([small, wide, tight], sell, 6, 6, fee_bps=5, margin_bps=10, minimum=2000)
    assert outcome.depth.makers == 3
    assert outcome.depth.total_capacity == 7500 * 10**6
    assert outcome.depth.max_maker_capacity == 5000 * 10**6
    assert outcome.price is not None
    assert outcome.price.bid_wallet == "0xtight"
    bid = 620_000  # tight's curve at 1000 NGNS
    assert outcome.price.buy_amount == bid * BPS // (BPS + 5 + 10)
    # The filler pays output plus fee and keeps at least the margin.
    paid = outcome.price.buy_amount + order_fee(outcome.price.buy_amount, 5)
    assert paid <= bid
    assert outcome.price.rate_ray == execution_rate(sell, 6, outcome.price.buy_amount, 6)


def test_fast_fill_reasons() -> None:
    assert fast_fill([], 10, 6, 6, fee_bps=5, margin_bps=10, minimum=2000).reason == (
        "no_market_maker_bids"
    )
    small = [("0xa", [(100, 100)])]
    too_big = fast_fill(small, 101, 6, 6, fee_bps=5, margin_bps=10, minimum=1)
    assert too_big.reason == "exceeds_max_maker_capacity"
    assert too_big.depth.max_maker_capacity == 100
    tiny = fast_fill(small, 50, 6, 6, fee_bps=5, margin_bps=10, minimum=2000)
    assert tiny.reason == "below_min_buy_amount"
