import asyncio

import pytest

from rfqkit.timestamps import isoformat
from simulator.clock import Clock


async def test_advance_moves_time_and_tells_listeners_in_order() -> None:
    clock = Clock()
    seen: list[float] = []

    async def listener(seconds: float) -> None:
        seen.append(seconds)

    clock.add_listener(listener)
    before = clock.time()
    now = await clock.advance(3600)
    assert clock.offset_seconds == 3600
    assert 3600 <= now.timestamp() - before < 3601
    await clock.advance(5)
    assert seen == [3600, 5]


async def test_clock_only_moves_forward() -> None:
    with pytest.raises(ValueError, match="forward"):
        await Clock().advance(0)


async def test_sleep_until_wakes_on_advance() -> None:
    clock = Clock()
    target = clock.time() + 3600
    sleeper = asyncio.create_task(clock.sleep_until(target))
    await asyncio.sleep(0.01)
    assert not sleeper.done()
    await clock.advance(3600)
    await asyncio.wait_for(sleeper, timeout=1)


async def test_a_cancel_that_meets_an_advance_is_not_lost() -> None:
    """A stop cancels the housekeeping task while it sleeps on the clock; a cancel that came
    with an advance waking it was once lost (asyncio.wait_for on Python 3.11), and the sleep
    returned as if it had only woken."""
    clock = Clock()
    sleeper = asyncio.create_task(clock.sleep_until(clock.time() + 3600))
    await asyncio.sleep(0)  # it sleeps
    await clock.advance(3600)  # wakes it ...
    sleeper.cancel()  # ... and the stop comes in the same turn of the loop
    with pytest.raises(asyncio.CancelledError):
        await sleeper


async def test_listener_failure_propagates_but_time_has_moved() -> None:
    clock = Clock()

    async def broken(_: float) -> None:
        raise RuntimeError("chain down")

    clock.add_listener(broken)
    with pytest.raises(RuntimeError, match="chain down"):
        await clock.advance(10)
    assert clock.offset_seconds == 10


def test_isoformat_is_utc_with_z() -> None:
    from datetime import UTC, datetime

    assert (
        isoformat(datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)) == "2026-01-02T03:04:05.678Z"
    )
