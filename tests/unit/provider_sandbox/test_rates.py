from __future__ import annotations

import itertools
from decimal import ROUND_DOWN, Decimal

from provider_sandbox.config import SandboxConfig
from provider_sandbox.rates import RateWalk, mid_rate, price, shift_factor

CONFIG = SandboxConfig(chains=())


def test_walk_is_seeded_and_bounded_per_minute() -> None:
    a, b, other = RateWalk(3, 0.001), RateWalk(3, 0.001), RateWalk(4, 0.001)
    levels = [a.level(m) for m in range(500)]
    assert levels == [b.level(m) for m in range(500)]
    assert levels != [other.level(m) for m in range(500)]
    assert levels[0] == 1.0
    for before, after in itertools.pairwise(levels):
        assert abs(after / before - 1) <= 0.001


def test_mid_is_constant_within_a_minute_and_moves_with_the_clock() -> None:
    walk = RateWalk(0, 0.001)
    epoch = 1_000_000.0
    shift = Decimal(1)
    assert mid_rate(walk, epoch, epoch + 1, shift) == mid_rate(walk, epoch, epoch + 59, shift)
    assert mid_rate(walk, epoch, epoch + 59, shift) == Decimal(1)
    assert mid_rate(walk, epoch, epoch + 60, shift) != Decimal(1)


def test_buy_price_applies_spread_and_fee_in_the_target_currency() -> None:
    priced = price("buy", Decimal("100000"), Decimal(1), CONFIG)
    assert priced.rate == Decimal("0.995")
    # gross 99 500 NGNS; fee 1 % of it plus 100
    assert priced.fee == Decimal("1095.000000")
    assert priced.target_amount == Decimal("98405.000000")
    assert priced.rate_label == "1 NGN = 0.995 NGNS"


def test_sell_target_is_rounded_down_to_kobo() -> None:
    priced = price("sell", Decimal("1234.567891"), Decimal(1), CONFIG)
    gross = Decimal("1234.567891") * Decimal("0.995")
    fee = Decimal("56.14")  # 0.5 % of gross (6.142) + 50, half-up to kobo
    assert priced.fee == fee
    assert priced.target_amount == (gross - fee).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    assert priced.target_amount.as_tuple().exponent == -2


def test_shift_moves_the_mid_and_compounds() -> None:
    once = shift_factor(Decimal(1), Decimal(2))
    assert once == Decimal("1.02")
    assert shift_factor(once, Decimal(-50)) == Decimal("0.51")
    walk = RateWalk(0, 0.001)
    assert mid_rate(walk, 0.0, 10.0, once) == Decimal("1.02")
    up = price("buy", Decimal("1000"), Decimal("1.02"), CONFIG)
    flat = price("buy", Decimal("1000"), Decimal(1), CONFIG)
    assert up.target_amount < flat.target_amount
