import itertools
from decimal import Decimal

import pytest

from simulator.services.shared.amounts import (
    RAY,
    buy_for_sell,
    combine,
    fee_on,
    gross,
    min_sell_amount,
    net_of_fee,
    rate_ray,
    sample,
    sell_for_buy,
    shortfall_bps,
    valid_curve,
)


@pytest.mark.parametrize("fee_bps", [0, 1, 5, 30, 1000])
@pytest.mark.parametrize("amount", [1, 2, 999, 10_000, 10**18 + 7, 123_456_789_012])
def test_net_of_fee_is_the_largest_output_within_the_cap(amount: int, fee_bps: int) -> None:
    net = net_of_fee(amount, fee_bps)
    assert gross(net, fee_bps) <= amount
    assert gross(net + 1, fee_bps) > amount


def test_fee_rounds_down() -> None:
    assert fee_on(19_999, 5) == 9
    assert fee_on(20_000, 5) == 10


def test_min_sell_amount_covers_a_feeable_output() -> None:
    # 1 whole token of a 6-decimal token is far above the smallest feeable output at 5 bps
    assert min_sell_amount(Decimal("1"), 6, 5) == 1_000_000
    # a 0-decimal token: 1 whole token cannot carry any fee; the feeable output plus its fee wins
    assert min_sell_amount(Decimal("1"), 0, 5) == 2000 + 1
    assert min_sell_amount(Decimal("0.01"), 18, 5) == 10**16


def test_rate_ray_is_decimal_normalized() -> None:
    # 1 USDT (18 dp) buys 1600 NGNS (6 dp): 1600 * RAY
    assert rate_ray(10**18, 18, 1600 * 10**6, 6) == 1600 * RAY
    assert rate_ray(0, 18, 5, 6) == 0


CURVE = [(100, 200), (200, 380), (400, 700)]


def test_shortfall_is_in_bps_of_the_better_rate() -> None:
    assert shortfall_bps(2 * RAY, RAY) == 5000.0
    assert shortfall_bps(3 * RAY, 2 * RAY) == 3333.33
    assert shortfall_bps(RAY, RAY) == 0.0
    assert shortfall_bps(RAY, 2 * RAY) == -10000.0  # the other is the better one
    assert shortfall_bps(0, RAY) == 0.0


def test_interpolation_and_inverse() -> None:
    assert buy_for_sell(CURVE, 50) == 100
    assert buy_for_sell(CURVE, 300) == 540
    assert buy_for_sell(CURVE, 401) is None
    assert sell_for_buy(CURVE, 540) == 300
    assert sell_for_buy(CURVE, 541) == 301  # rounded up: never under-charge
    assert sell_for_buy(CURVE, 701) is None


def test_valid_curve_rules() -> None:
    assert valid_curve(CURVE)
    assert not valid_curve([])
    assert not valid_curve([(100, 10), (100, 20)])
    assert not valid_curve([(100, 20), (200, 10)])
    assert not valid_curve([(i + 1, i + 1) for i in range(10)])


def test_combine_takes_best_segments_first_and_sample_keeps_nine_points() -> None:
    a = [(100, 200)]  # rate 2
    b = [(100, 300), (200, 400)]  # rates 3 then 1
    combined = combine([a, b])
    assert combined == [(100, 300), (200, 500), (300, 600)]
    points = sample(combined)
    assert len(points) == 9
    assert points[-1] == (300, 600)
    assert all(p[0] < q[0] and p[1] <= q[1] for p, q in itertools.pairwise(points))
