"""Paging of /historical_trades: newest first, `limit` per side (default 200, at most 1000),
a page never splits a second (so it may exceed the limit), buy and sell share one cutoff, the
time bounds are inclusive, and paging back with end_time = oldest trade_timestamp - 1 until a
page is empty yields every trade exactly once."""

from __future__ import annotations

import random

import pytest

from simulator.errors import InvalidRequest
from simulator.services.feed.model import Side, TradePage, TradeRecord
from tests.unit.services.feed.harness import NGNS, T0, USDT, Harness

BASE = int(T0)


async def trade_at(h: Harness, second: int, side: Side) -> None:
    """A USDT_NGN trade at BASE + second: `buy` when the taker received the USDT."""
    at = float(BASE + second)
    if side == "buy":
        await h.add(h.fill(gave=USDT, gave_amount=10**18, got=NGNS, got_amount=16 * 10**8, at=at))
    else:
        await h.add(h.fill(gave=NGNS, gave_amount=16 * 10**8, got=USDT, got_amount=10**18, at=at))


def seconds(trades: list[TradeRecord]) -> list[int]:
    return [t.timestamp - BASE for t in trades]


def oldest(page: TradePage) -> int:
    return min(t.timestamp for t in page.buy + page.sell)


async def test_newest_first_and_a_second_is_never_split() -> None:
    h = Harness()
    for second, side in [(1, "buy"), (2, "buy"), (3, "buy"), (3, "buy"), (3, "buy"), (4, "sell")]:
        await trade_at(h, second, side)  # type: ignore[arg-type]
    first = h.trades(limit=2)
    # Second 4 (one sell) fits; second 3 would put three buys on a page of two: cutoff.
    assert (seconds(first.buy), seconds(first.sell)) == ([], [4])
    crowded = h.trades(limit=2, end_time=oldest(first) - 1)
    # Second 3 alone holds three buys: the whole second, over the limit.
    assert (seconds(crowded.buy), seconds(crowded.sell)) == ([3, 3, 3], [])
    third = h.trades(limit=2, end_time=oldest(crowded) - 1)
    assert (seconds(third.buy), seconds(third.sell)) == ([2, 1], [])
    assert h.trades(limit=2, end_time=oldest(third) - 1) == TradePage([], [])


async def test_buy_and_sell_share_one_cutoff() -> None:
    h = Harness()
    for second in (1, 2, 3, 4, 5):
        await trade_at(h, second, "buy")
    await trade_at(h, 1, "sell")
    page = h.trades(limit=3)
    assert seconds(page.buy) == [5, 4, 3]
    assert page.sell == [], "the sell at second 1 lies before the shared cutoff (second 3)"
    rest = h.trades(limit=3, end_time=oldest(page) - 1)
    assert (seconds(rest.buy), seconds(rest.sell)) == ([2, 1], [1])


async def test_a_type_filter_returns_both_keys_with_the_other_empty() -> None:
    h = Harness()
    for second, side in [(1, "buy"), (2, "sell"), (3, "buy")]:
        await trade_at(h, second, side)  # type: ignore[arg-type]
    buys = h.trades(side="buy")
    assert (seconds(buys.buy), buys.sell) == ([3, 1], [])
    sells = h.trades(side="sell")
    assert (sells.buy, seconds(sells.sell)) == ([], [2])
    # The filtered-out side does not count against the limit either.
    assert seconds(h.trades(side="buy", limit=1).buy) == [3]


async def test_start_and_end_are_inclusive() -> None:
    h = Harness()
    for second in range(10):
        await trade_at(h, second, "buy")
    page = h.trades(start_time=BASE + 3, end_time=BASE + 6)
    assert seconds(page.buy) == [6, 5, 4, 3]
    assert seconds(h.trades(start_time=BASE + 9).buy) == [9]
    assert seconds(h.trades(end_time=BASE).buy) == [0]
    assert h.trades(start_time=BASE + 10).buy == []


async def test_start_after_end_is_refused() -> None:
    h = Harness()
    with pytest.raises(InvalidRequest):
        h.trades(start_time=BASE + 2, end_time=BASE + 1)
    assert h.trades(start_time=BASE + 1, end_time=BASE + 1) == TradePage([], [])


async def test_limit_defaults_to_200_and_is_clamped_to_1000() -> None:
    h = Harness()
    for second in range(1200):
        await trade_at(h, second, "sell")
    assert len(h.trades().sell) == 200
    assert len(h.trades(limit=1000).sell) == 1000
    assert len(h.trades(limit=5000).sell) == 1000
    assert len(h.trades(limit=7).sell) == 7


@pytest.mark.parametrize("seed", range(12))
async def test_paging_back_yields_every_trade_exactly_once(seed: int) -> None:
    rng = random.Random(seed)
    h = Harness()
    for _ in range(rng.randrange(1, 120)):
        # Crowded seconds: up to 7 trades share one.
        await trade_at(h, rng.randrange(40), rng.choice(("buy", "sell")))
    limit = rng.randrange(1, 6)
    side: Side | None = rng.choice((None, "buy", "sell"))
    seen: list[str] = []
    end: int | None = None
    for _ in range(500):
        page = h.trades(limit=limit, side=side, end_time=end)
        if not page.buy and not page.sell:
            break
        stamps = {t.timestamp for t in page.buy + page.sell}
        for got in (page.buy, page.sell):
            assert got == sorted(got, key=lambda t: t.order, reverse=True), "newest first"
            assert len(got) <= limit or len(stamps) == 1, "over the limit only for one second"
        if side is not None:
            assert (page.sell if side == "buy" else page.buy) == []
        seen += [t.trade_id for t in page.buy + page.sell]
        end = oldest(page) - 1
    everything = [t for t in h.store.tape("USDT_NGN").trades if side is None or t.side == side]
    assert sorted(seen) == sorted(t.trade_id for t in everything)
    assert len(seen) == len(set(seen)), "no trade twice"
