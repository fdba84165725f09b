"""The matcher (services/limit_orders/book.py): priority by level and time, steering, minRate,
live funding and nonces, holds, whole-order composition, and the prefix of whole offers that
reaches a size (the rates feed's price of a BOOK side)."""

from __future__ import annotations

import pytest

from simulator.services.limit_orders.book import (
    Composition,
    Steering,
    capacity,
    compose,
    offers,
    priority,
    reaching,
)
from simulator.services.shared.amounts import RAY
from tests.unit.services.limit_orders.factory import MAKERS, NGNS, State, limit_order

NOW = 1_900_000_000.0


def usdc(units: float) -> int:
    return int(units * 10**6)


def ngns(units: float) -> int:
    return int(units * 10**6)


def test_best_book_rate_first() -> None:
    cheap = limit_order(ngns(1500), usdc(1))  # 1500 NGNS per USDC
    rich = limit_order(ngns(1600), usdc(1))  # 1600: better for the taker
    assert rich.rate_ray == 1600 * RAY
    assert [o.order_id for o in priority([cheap, rich])] == [rich.order_id, cheap.order_id]


def test_rates_within_one_bp_are_one_level_in_time_priority() -> None:
    older = limit_order(ngns(1600), usdc(1), sequence=10)
    # 0.9 bp better, but placed later: same level, so time priority keeps the older first.
    newer_better = limit_order(ngns(1600.144), usdc(1), sequence=11)
    # 2 bp better: a level of its own, ahead of both.
    best = limit_order(ngns(1600.32), usdc(1), sequence=12)
    ranked = priority([newer_better, older, best])
    assert [o.order_id for o in ranked] == [best.order_id, older.order_id, newer_better.order_id]


def test_dead_spent_held_and_unfunded_orders_are_not_offered() -> None:
    live = limit_order(ngns(1600), usdc(1), maker=0)
    expired = limit_order(ngns(1600), usdc(1), maker=0, deadline=int(NOW) - 1)
    spent = limit_order(ngns(1600), usdc(1), maker=1)
    held = limit_order(ngns(1600), usdc(1), maker=2)
    unfunded = limit_order(ngns(1600), usdc(1), maker=3)
    superseded = limit_order(ngns(1600), usdc(1), maker=0)
    superseded.superseded = True
    state = State(
        spent_nonces={(MAKERS[1].address.lower(), spent.nonce)},
        spendable_by={(NGNS.lower(), MAKERS[3].address.lower()): ngns(1599)},
    )
    got = offers(
        [live, expired, spent, held, unfunded, superseded],
        state,
        NOW,
        held=lambda order_hash: order_hash == held.order_hash,
    )
    assert [o.order_id for o in got] == [live.order_id]


def test_a_makers_funds_must_cover_every_better_offer_of_that_token() -> None:
    first = limit_order(ngns(1000), usdc(1), maker=0)
    second = limit_order(ngns(1000), usdc(1.1), maker=0)  # worse rate: ranked after
    third = limit_order(ngns(500), usdc(0.6), maker=0)
    state = State(spendable_by={(NGNS.lower(), MAKERS[0].address.lower()): ngns(1500)})
    got = offers([first, second, third], state, NOW)
    # 1000 fits, the second 1000 would need 2000, the 500 fits beside the first.
    assert [o.order_id for o in got] == [first.order_id, third.order_id]


def test_restricted_keeps_only_listed_makers_and_preferred_come_first() -> None:
    a = limit_order(ngns(1600), usdc(1), maker=0)
    b = limit_order(ngns(1550), usdc(1), maker=1)
    c = limit_order(ngns(1500), usdc(1), maker=2)
    state = State()
    restricted = offers([a, b, c], state, NOW, steering=Steering.of(None, [MAKERS[2].address]))
    assert [o.order_id for o in restricted] == [c.order_id]
    preferred = offers([a, b, c], state, NOW, steering=Steering.of([MAKERS[1].address], None))
    assert [o.order_id for o in preferred] == [b.order_id, a.order_id, c.order_id]


def test_min_rate_applies_to_every_order() -> None:
    a = limit_order(ngns(1600), usdc(1))
    b = limit_order(ngns(1500), usdc(1))
    got = offers([a, b], State(), NOW, min_rate=1550 * RAY)
    assert [o.order_id for o in got] == [a.order_id]


def test_compose_takes_whole_orders_and_skips_what_does_not_fit() -> None:
    a = limit_order(ngns(1600), usdc(1))  # costs 1_000_500 with the 5 bp fee
    b = limit_order(ngns(3000), usdc(2))  # costs 2_001_000
    c = limit_order(ngns(700), usdc(0.5))  # costs 500_250
    ranked = priority([a, b, c])
    assert [o.order_id for o in ranked] == [a.order_id, b.order_id, c.order_id]
    chosen = compose(ranked, 1_000_500 + 500_250)
    assert [o.order_id for o in chosen] == [a.order_id, c.order_id]
    composition = Composition(tuple(chosen))
    assert composition.sold == 1_500_750
    assert composition.proceeds == ngns(2300)
    assert composition.fee == 750
    assert compose(ranked, 1_000_499) == [c]
    assert compose(ranked, 500_249) == []
    assert capacity(ranked) == (1_000_500 + 2_001_000 + 500_250, ngns(5300))


def test_reaching_takes_whole_offers_in_order_until_the_size_is_reached() -> None:
    a = limit_order(ngns(1600), usdc(1))  # costs 1_000_500, gives 1600 NGNS
    b = limit_order(ngns(3000), usdc(2))  # costs 2_001_000
    c = limit_order(ngns(700), usdc(0.5))  # costs 500_250
    ranked = priority([a, b, c])
    # By cost (the taker's exact input): the order that crosses the size is taken whole.
    assert reaching(ranked, cost=1_000_500) == [a]
    assert reaching(ranked, cost=1_000_501) == [a, b]
    assert reaching(ranked, cost=1) == [a], "one order already reaches a tiny size"
    # By proceeds (the taker's exact output).
    assert reaching(ranked, proceeds=ngns(1600)) == [a]
    assert reaching(ranked, proceeds=ngns(4000)) == [a, b]
    # Together they fall short: every offer. Nothing offered: nothing.
    assert reaching(ranked, cost=10**12) == [a, b, c]
    assert reaching([], proceeds=1) == []
    # A swap of exactly the prefix's cost composes exactly that prefix.
    prefix = reaching(ranked, proceeds=ngns(4000))
    assert compose(ranked, Composition(tuple(prefix)).sold) == prefix
    with pytest.raises(ValueError, match="exactly one"):
        reaching(ranked, cost=1, proceeds=1)
    with pytest.raises(ValueError, match="exactly one"):
        reaching(ranked)
