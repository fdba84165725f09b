"""The pricing model: exact integer math, levels, firm prices consistent with the levels."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from makers.pricing import (
    DEFAULT_MIDS,
    PriceCurve,
    PricingModel,
    PricingParams,
    TokenSpec,
    interpolate_levels,
)

USDT = TokenSpec("USDT", 18)
NGNS = TokenSpec("NGNS", 6)
USDC = TokenSpec("USDC", 6)
WBNB = TokenSpec("WBNB", 18)
E18, E6 = 10**18, 10**6
DIRECTIONS = [(USDT, NGNS), (NGNS, USDT), (USDC, USDT), (USDT, USDC), (WBNB, USDT), (USDT, WBNB)]


def model(**overrides: object) -> PricingModel:
    params: dict[str, object] = {
        "mids": DEFAULT_MIDS,
        "spread_bps": Fraction(10),
        "impact_bps": Fraction(20),
        "max_inventory_fraction": Fraction(1),
        **overrides,
    }
    return PricingModel(PricingParams(**params))  # type: ignore[arg-type]


def curve(sell: TokenSpec, buy: TokenSpec, **overrides: object) -> PriceCurve:
    result = model(**overrides).curve(sell, buy)
    assert result is not None
    return result


def test_flat_curve_is_mid_less_half_spread_exactly() -> None:
    flat = curve(USDT, NGNS, impact_bps=Fraction(0))
    # 1 USDT at 1600 less 5 bps = 1599.2 NGNS = 1_599_200_000 atomic, exactly.
    assert flat.curve(E18) == 1_599_200_000
    # Inverse direction: 1600 NGNS -> 1 USDT less 5 bps = 0.9995 USDT, 18 decimals, exact.
    inverse = curve(NGNS, USDT, impact_bps=Fraction(0))
    assert inverse.curve(1600 * E6) == 9995 * 10**14
    # A size that does not divide evenly rounds down (the maker never gives the extra unit).
    assert inverse.curve(1) == 624_687_500  # 1e-6 NGNS -> 6.246875e-10 USDT, exact
    assert flat.curve(10**12) == 1599  # 1e-6 USDT -> 0.0015992 NGNS = 1599.2 atomic
    assert flat.curve(1) == 0  # 1e-18 USDT -> 1.5992e-12 NGNS -> 0 atomic


def test_impact_is_linear_in_dollar_notional() -> None:
    c = curve(USDT, NGNS, spread_bps=Fraction(0), impact_bps=Fraction(20))
    assert c.impact_at(1_000_000 * E18) == 20  # 20 bps at $1M
    assert c.impact_at(500_000 * E18) == 10
    # Selling NGNS: $1M is 1.6e9 NGNS.
    n = curve(NGNS, USDT, spread_bps=Fraction(0), impact_bps=Fraction(20))
    assert n.impact_at(1_600_000_000 * E6) == 20
    # WBNB at $600: 5000 WBNB is $3M; the convex exponent squares the ratio.
    assert curve(WBNB, USDT, impact_bps=Fraction(20)).impact_at(5_000 * E18) == 60
    w = curve(WBNB, USDT, impact_bps=Fraction(20), impact_exponent=2)
    assert w.impact_at(5_000 * E18) == 180


@pytest.mark.parametrize(("sell", "buy"), DIRECTIONS)
@pytest.mark.parametrize("fraction", [Fraction(1), Fraction(3, 10)])
def test_levels_are_at_most_nine_strictly_increasing_and_end_at_the_depth(
    sell: TokenSpec, buy: TokenSpec, fraction: Fraction
) -> None:
    inventory = 1_000_000 * 10**buy.decimals
    c = curve(sell, buy, max_inventory_fraction=fraction)
    levels = c.levels(inventory)
    assert 1 <= len(levels) <= 9
    for (s0, b0), (s1, b1) in itertools.pairwise(levels):
        assert s1 > s0
        assert b1 > b0
    depth_sell, depth_buy = levels[-1]
    assert depth_sell == c.depth(inventory)
    assert depth_buy <= c.give_cap(inventory) == inventory * fraction
    limit = c.curve_limit()
    if limit is None or depth_sell < limit:
        # Inventory-bound: one more unit of sell would need more than the cap.
        assert c.price_exact_input(depth_sell + 1, inventory) is None
    # Average price gets worse with size (impact).
    prices = [Fraction(b, s) for s, b in levels]
    assert prices == sorted(prices, reverse=True)
    # Every level lies on or below the smooth curve (rounded down).
    for s, b in levels:
        smooth = c.curve(s)
        assert smooth is not None
        assert b <= smooth


def test_decimals_are_handled_exactly_for_18_and_6() -> None:
    c = curve(USDT, NGNS, impact_bps=Fraction(0), spread_bps=Fraction(0))
    # 1 whole USDT (1e18) -> 1600 whole NGNS (1.6e9): decimals differ by 12.
    assert c.price_exact_input(E18, 10**15) == 1600 * E6
    assert c.price_exact_output(1600 * E6, 10**15) == E18
    back = curve(NGNS, USDT, impact_bps=Fraction(0), spread_bps=Fraction(0))
    assert back.price_exact_input(1600 * E6, 10**30) == E18
    assert back.price_exact_output(E18, 10**30) == 1600 * E6


def test_inventory_caps_the_depth_and_commitments_shrink_it() -> None:
    c = curve(NGNS, USDT, max_inventory_fraction=Fraction(1, 5))
    full = c.depth(1_000 * E18)
    # Shows 20 % of 1000 USDT = 200 USDT, about 320k NGNS of sell.
    assert c.levels(1_000 * E18)[-1][1] <= 200 * E18
    assert 319_000 * E6 < full < 321_000 * E6
    assert c.depth(500 * E18) < full
    assert c.levels(0) == []
    assert c.depth(0) == 0
    assert c.price_exact_input(1600 * E6, 0) is None
    assert c.price_exact_output(E18, 0) is None


def test_curve_end_caps_depth_when_inventory_is_huge() -> None:
    c = curve(USDT, WBNB, impact_bps=Fraction(20), max_impact_bps=Fraction(1000))
    limit = c.curve_limit()
    assert limit == 50_000_000 * E18  # 1000 bps at 50x $1M
    assert c.depth(10**40) == limit
    assert c.price_exact_input(limit + 1, 10**40) is None


@pytest.mark.parametrize(("sell", "buy"), DIRECTIONS)
def test_firm_prices_match_the_levels_and_stay_within_one_grid_step_of_the_curve(
    sell: TokenSpec, buy: TokenSpec
) -> None:
    rng = random.Random(f"{sell.symbol}->{buy.symbol}")
    inventory = 1_000_000 * 10**buy.decimals
    c = curve(sell, buy, max_inventory_fraction=Fraction(3, 10))
    levels = c.levels(inventory)
    lowest, depth = levels[0][0], levels[-1][0]
    for _ in range(300):
        size = rng.randint(1, depth)
        gives = c.price_exact_input(size, inventory)
        smooth = c.curve(size)
        assert smooth is not None
        if gives is None:
            assert smooth == 0 or size * c.price < 1  # too small to give anything
            continue
        # Never better for the taker than the curve …
        assert gives <= smooth
        # … nor than interpolating the published levels (inside them) …
        expected = interpolate_levels(levels, size)
        if size >= lowest:
            assert expected is not None
            assert gives <= expected
            assert gives > expected - 1  # rounded down, nothing more
        # … and never worse than the curve's average price at twice the size (one grid step).
        doubled = c.curve(min(2 * size, c.curve_limit() or 2 * size))
        assert doubled is not None
        assert gives >= Fraction(doubled * size, min(2 * size, c.curve_limit() or 2 * size)) - 2


@pytest.mark.parametrize(("sell", "buy"), DIRECTIONS)
def test_exact_output_is_the_rounded_up_inverse_of_exact_input(
    sell: TokenSpec, buy: TokenSpec
) -> None:
    rng = random.Random(f"out {sell.symbol}->{buy.symbol}")
    inventory = 1_000_000 * 10**buy.decimals
    c = curve(sell, buy, max_inventory_fraction=Fraction(3, 10))
    max_give = c.levels(inventory)[-1][1]
    for _ in range(300):
        gives = rng.randint(1, max_give)
        receives = c.price_exact_output(gives, inventory)
        assert receives is not None
        # The maker asks enough: at that size its exact-input price gives at least `gives` …
        at = c.price_exact_input(receives, inventory)
        assert at is not None
        assert at >= gives
        # … and not more than needed: one unit less would give less.
        if receives > 1:
            below = c.price_exact_input(receives - 1, inventory)
            assert below is None or below < gives
    assert c.price_exact_output(max_give + 1, inventory) is None


def test_mid_lookup_inverts_and_overrides() -> None:
    params = PricingParams(mids={"USDT/NGNS": Fraction(1550)})
    assert params.mid("USDT", "NGNS") == 1550
    assert params.mid("NGNS", "USDT") == Fraction(1, 1550)
    assert params.mid("USDT", "WBNB") is None
    assert params.usd_price("NGNS") == Fraction(1, 1550)
    assert params.usd_price("USDT") == 1
    assert params.usd_price("WBNB") is None
    assert PricingModel(params).levels(USDT, WBNB, 10**30) == []


def test_params_are_validated() -> None:
    with pytest.raises(ValueError, match="10000"):
        PricingParams(mids={}, spread_bps=Fraction(16_000), max_impact_bps=Fraction(1000))
    with pytest.raises(ValueError, match="fraction"):
        PricingParams(mids={}, max_inventory_fraction=Fraction(2))
    with pytest.raises(ValueError, match="BASE/QUOTE"):
        PricingParams(mids={"USDT": Fraction(1)})


def test_memoised_ladders_match_fresh_curves_and_are_copies() -> None:
    rng = random.Random(3)
    memoised = curve(USDT, NGNS, max_inventory_fraction=Fraction(3, 4))
    inventories = [rng.randrange(0, 5_000_000 * E6) for _ in range(40)]
    for inventory in inventories * 3 + list(reversed(inventories)):  # hits and evictions
        fresh = curve(USDT, NGNS, max_inventory_fraction=Fraction(3, 4))
        assert memoised.ladder(inventory) == fresh.ladder(inventory)
        assert memoised.levels(inventory) == fresh.levels(inventory)
        assert memoised.depth(inventory) == fresh.depth(inventory)
    ladder = memoised.ladder(inventories[0])
    ladder.clear()  # the caller's list: the memo is untouched
    assert memoised.ladder(inventories[0]) == fresh.ladder(inventories[0])
