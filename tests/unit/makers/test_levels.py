"""Outgoing levels: the direct frames are the Levels model's bytes, invalid ladders fail as the
model fails, per-direction coalescing with unchanged levels skipped, and the maker's rounds."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any

import pytest
from pydantic import ValidationError

from makers.levels import LevelsCoalescer, LevelsRounds, LevelsUpdate, check_levels
from rfqkit.maker_protocol import Level, Levels, serialize

SELL, BUY = "0x" + "a1" * 20, "0xB2" + "b2" * 19
INTERVAL_S = 0.05


@pytest.mark.parametrize(
    "points",
    [
        [],
        [(1, 1)],
        [(10**18, 1_599_000_000), (2 * 10**18, 3_190_000_000)],
        [(i, 10 * i) for i in range(1, 10)],
        [(2**256 - 2, 2**256 - 2), (2**256 - 1, 2**256 - 1)],
        [Level(sell_amount=5, buy_amount=6), Level(sell_amount=7, buy_amount=8)],
        [(5, 6), Level(sell_amount=7, buy_amount=8)],
        [["5", "6"], ("7", 8)],  # strings and lists: the model converts them
    ],
)
def test_frames_are_the_models_bytes(points: list[Any]) -> None:
    update = check_levels(56, SELL, BUY, points)
    model = Levels(
        chain_id=56,
        sell_token=SELL,
        buy_token=BUY,
        levels=[
            p if isinstance(p, Level) else Level(sell_amount=p[0], buy_amount=p[1]) for p in points
        ],
    )
    assert update.frame() == serialize(model)
    assert update.points == tuple((lv.sell_amount, lv.buy_amount) for lv in model.levels)


@pytest.mark.parametrize(
    ("chain_id", "sell", "points"),
    [
        (56, SELL, [(2, 2), (1, 3)]),  # sell not increasing
        (56, SELL, [(1, 3), (2, 3)]),  # buy not increasing
        (56, SELL, [(0, 1)]),  # zero
        (56, SELL, [(-1, 1)]),  # negative
        (56, SELL, [(2**256, 1)]),  # too large
        (56, SELL, [(True, 1)]),  # a boolean is no amount
        (56, SELL, [(i, i) for i in range(1, 11)]),  # ten points
        (0, SELL, [(1, 1)]),  # chain id
        (56, "0x1234", [(1, 1)]),  # address
    ],
)
def test_invalid_ladders_fail_as_the_model_does(
    chain_id: int, sell: str, points: list[tuple[int, int]]
) -> None:
    with pytest.raises(ValidationError) as direct:
        check_levels(chain_id, sell, BUY, points)
    with pytest.raises(ValidationError) as model:
        Levels(
            chain_id=chain_id,
            sell_token=sell,
            buy_token=BUY,
            levels=[Level(sell_amount=s, buy_amount=b) for s, b in points],
        )
    assert str(direct.value) == str(model.value)


class Wire:
    """A fake connection: the frames the coalescer sends, as (loop time, buyAmount of the first
    level or None)."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, int | None]] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def send(self, text: str) -> bool:
        levels = json.loads(text)["levels"]
        first = int(levels[0]["buyAmount"]) if levels else None
        self.sent.append((asyncio.get_running_loop().time(), first))
        return True

    def spawn(self, coro: Coroutine[Any, Any, None], label: str) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self.tasks.append(task)
        return task

    async def settle(self) -> None:
        await asyncio.gather(*self.tasks)

    def buys(self) -> list[int | None]:
        return [buy for _, buy in self.sent]


def update(buy: int, sell_token: str = SELL, buy_token: str = BUY) -> LevelsUpdate:
    return check_levels(56, sell_token, buy_token, [(10**18, buy)])


async def test_coalescing_sends_the_newest_once_per_interval() -> None:
    wire = Wire()
    # The publishes below come inside one interval however slow the machine is: the
    # coalescer's clock stands still (the flush still sleeps the interval on the loop).
    coalescer = LevelsCoalescer(wire.send, wire.spawn, now=lambda: 0.0)
    resend = 10.0
    assert await coalescer.publish(update(1), INTERVAL_S, resend)  # sent at once
    assert await coalescer.publish(update(2), INTERVAL_S, resend)  # coalesced away
    assert await coalescer.publish(update(3), INTERVAL_S, resend)  # the newest wins
    assert await coalescer.publish(update(9, BUY, SELL), INTERVAL_S, resend)  # own interval
    assert wire.buys() == [1, 9]
    await wire.settle()
    assert wire.buys() == [1, 9, 3]
    assert wire.sent[2][0] - wire.sent[0][0] >= INTERVAL_S * 0.99


async def test_unchanged_levels_are_skipped_until_resend_after() -> None:
    wire = Wire()
    coalescer = LevelsCoalescer(wire.send, wire.spawn)
    await coalescer.publish(update(1), 0.0, 10.0)
    await coalescer.publish(update(1), 0.0, 10.0)
    await coalescer.publish(update(1), 0.0, 10.0)
    assert wire.buys() == [1]
    await coalescer.publish(update(2), 0.0, 10.0)  # a change goes at once
    await coalescer.publish(update(2), 0.0, 0.0)  # resend_after_s 0: always refreshed
    assert wire.buys() == [1, 2, 2]
    await asyncio.sleep(INTERVAL_S)
    await coalescer.publish(update(2), 0.0, INTERVAL_S / 2)  # old enough: refreshed
    assert wire.buys() == [1, 2, 2, 2]


async def test_a_change_undone_inside_the_interval_is_not_sent() -> None:
    wire = Wire()
    coalescer = LevelsCoalescer(wire.send, wire.spawn)
    await coalescer.publish(update(1), INTERVAL_S, 10.0)
    await coalescer.publish(update(2), INTERVAL_S, 10.0)  # pending...
    await coalescer.publish(update(1), INTERVAL_S, 10.0)  # ...and back to what was sent
    await wire.settle()
    assert wire.buys() == [1]
    # An unchanged publish inside the interval schedules nothing at all.
    await coalescer.publish(update(1), INTERVAL_S, 10.0)
    assert all(task.done() for task in wire.tasks)


async def test_cancel_drops_a_scheduled_send() -> None:
    wire = Wire()
    coalescer = LevelsCoalescer(wire.send, wire.spawn)
    await coalescer.publish(update(1), INTERVAL_S, 10.0)
    await coalescer.publish(update(2), INTERVAL_S, 10.0)
    coalescer.cancel()
    await asyncio.gather(*wire.tasks, return_exceptions=True)
    assert wire.buys() == [1]


async def test_rounds_are_full_at_first_then_only_what_changed() -> None:
    rounds = LevelsRounds()
    rounds.changed()
    assert await rounds.next(10.0) == (True, set())  # the first round is full
    rounds.changed(56, BUY)
    rounds.changed(97, SELL)
    rounds.changed()  # a wake that changed nothing
    assert await rounds.next(10.0) == (False, {(56, BUY.lower()), (97, SELL.lower())})
    rounds.everything()
    assert await rounds.next(10.0) == (True, set())


async def test_rounds_turn_full_after_the_interval_even_under_changes() -> None:
    rounds = LevelsRounds()
    rounds.everything()
    await rounds.next(INTERVAL_S)
    loop = asyncio.get_running_loop()
    last_full, fulls, partial = loop.time(), 0, 0
    for _ in range(1_000):  # bounded; normally about 25 rounds
        rounds.changed(56, BUY)  # never quiet: the wait never times out
        full, dirty = await rounds.next(INTERVAL_S)
        assert dirty == {(56, BUY.lower())}
        if full:
            assert loop.time() - last_full >= INTERVAL_S * 0.99
            last_full, fulls = loop.time(), fulls + 1
            if fulls == 2:
                break
        else:
            partial += 1
        await asyncio.sleep(INTERVAL_S / 10)
    assert fulls == 2
    assert partial > 0
    # Quiet: the wait times out after the interval and the round is full.
    assert (await rounds.next(INTERVAL_S))[0]
