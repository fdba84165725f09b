"""The outstanding-RFQ slot ledger's contract, run against both ledgers: in memory (one
instance) and on a real redis-server (several). The rules are services/rfq/slots.py's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from rfqkit.timestamps import from_unix, isoformat
from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.server import RedisNode
from simulator.adapters.redis.slots import SharedSlots
from simulator.clock import Clock
from simulator.errors import RateLimited
from simulator.services.rfq.ports import SlotLedger
from simulator.services.rfq.slots import OutstandingSlots
from simulator.services.shared.state import StateFormatError
from tests.integration.shared_engine.ledgers import KINDS, Ledgers, ledgers_of

Slots = Ledgers[SlotLedger]


def in_memory(clock: Clock) -> SlotLedger:
    return OutstandingSlots(clock)


def on_engine(engine: SharedEngine, clock: Clock) -> SlotLedger:
    return SharedSlots(engine, clock)


@pytest.fixture(params=KINDS)
async def ledgers(request: pytest.FixtureRequest) -> AsyncIterator[Slots]:
    async with ledgers_of(request, in_memory, on_engine) as made:
        yield made


def free_at(answer: BaseException | None) -> str:
    assert isinstance(answer, RateLimited), answer
    assert answer.details is not None
    assert answer.details["reason"] == "outstanding_rfq_cap"
    assert "Retry-After" not in answer.headers
    return str(answer.details["nextSlotFreeAt"])


async def refused(call: Callable[[], Awaitable[None]]) -> str:
    with pytest.raises(RateLimited) as over:
        await call()
    return free_at(over.value)


async def test_cap_release_and_lapse(ledgers: Slots) -> None:
    slots, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    for i in range(4):
        await slots.acquire("ip:a", f"r{i}", 4, hold_s=5)
        slots.extend(f"r{i}", now + 100 + i)
    assert await refused(lambda: slots.acquire("ip:a", "r4", 4, 5)) == isoformat(
        from_unix(now + 100)
    )
    await slots.acquire("ip:b", "other", 4, hold_s=5)  # another caller has its own slots
    slots.release("r0")
    await slots.acquire("ip:a", "r5", 4, hold_s=5)
    slots.extend("r5", now + 200)
    assert await refused(lambda: slots.acquire("ip:a", "r6", 4, 5)) == isoformat(
        from_unix(now + 101)
    )
    await clock.advance(102)  # r1 lapsed (held until +101)
    await slots.acquire("ip:a", "r6", 4, hold_s=5)


async def test_over_the_cap_waits_for_running_auctions_then_names_the_earliest_deadline(
    ledgers: Slots,
) -> None:
    slots, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    for i in range(2):
        await slots.acquire("key:a", f"r{i}", 2, hold_s=5.75)  # provisional: auctions running
    ran = ledgers.scripts_run()
    late = asyncio.create_task(slots.acquire("key:a", "r2", 2, hold_s=5.75))
    await ledgers.ran(ran, 1)  # checked once
    assert not late.done()  # nobody knows yet when a slot frees
    ran = ledgers.scripts_run()
    slots.extend("r0", now + 150)  # quoted: held to its latestOrderDeadline
    await ledgers.ran(ran, 2)  # the extend, then the waiter's check that it woke
    assert not late.done()  # r1 still soliciting
    slots.extend("r1", now + 120)
    assert await refused(lambda: late) == isoformat(from_unix(now + 120))


async def test_a_slot_a_no_quote_gives_back_is_taken_by_the_waiting_request(
    ledgers: Slots,
) -> None:
    slots = ledgers.new()
    await slots.acquire("ip:b", "r0", 1, hold_s=5.75)
    waiting = asyncio.create_task(slots.acquire("ip:b", "r1", 1, hold_s=5.75))
    await asyncio.sleep(0)
    slots.release("r0")  # the auction ended with no quote
    await waiting
    held = slots.state("rfq.slots").dump()["slots"]
    assert list(held) == ["r1"]
    assert held["r1"]["settled"] is False


async def test_a_burst_over_the_cap_is_answered_once_the_auctions_end(ledgers: Slots) -> None:
    slots, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    for i in range(4):
        await slots.acquire("key:c", f"r{i}", 4, hold_s=5.75)
    burst = [
        asyncio.create_task(slots.acquire("key:c", f"b{i}", 4, hold_s=5.75)) for i in range(26)
    ]
    await asyncio.sleep(0)
    for i in range(4):
        slots.extend(f"r{i}", now + 110 + i)
    answers = await asyncio.gather(*burst, return_exceptions=True)
    assert {free_at(a) for a in answers} == {isoformat(from_unix(now + 110))}


async def test_lapsed_slots_of_owners_who_never_return_are_dropped(ledgers: Slots) -> None:
    slots, clock = ledgers.new(), ledgers.clock
    for i in range(3):
        await slots.acquire(f"ip:10.0.0.{i}", f"r{i}", 4, hold_s=60)
    await slots.acquire("ip:10.0.0.9", "kept", 4, hold_s=600)
    await clock.advance(61)
    slots.evict_lapsed()
    await ledgers.drained()
    saved = slots.state("rfq.slots").dump()
    assert list(saved["slots"]) == ["kept"]
    assert saved["by_owner"] == {"ip:10.0.0.9": ["kept"]}


async def test_the_state_round_trips_and_a_foreign_one_changes_nothing(ledgers: Slots) -> None:
    slots, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    await slots.acquire("key:d", "r0", 4, hold_s=5)
    await slots.acquire("key:d", "r1", 4, hold_s=5)
    slots.extend("r0", now + 140)
    slots.extend("r1", now + 130.25)
    await slots.acquire("ip:e", "r2", 4, hold_s=7)
    state = slots.state("rfq.slots")
    saved = state.dump()
    assert saved["slots"]["r1"] == {
        "owner": "key:d",
        "rfq_id": "r1",
        "held_until": now + 130.25,
        "settled": True,
    }
    slots.release("r0")
    slots.release("r2")
    state.load(saved)
    assert state.dump() == saved
    with pytest.raises(StateFormatError):
        state.load({"slots": {"r9": {"owner": 1}}, "by_owner": {}, "ends": {}})
    assert state.dump() == saved
    # what was put back counts: key:d holds two of a cap of two
    assert await refused(lambda: slots.acquire("key:d", "r3", 2, 5)) == isoformat(
        from_unix(now + 130.25)
    )


async def test_two_instances_never_both_take_the_last_slot(redis_node: RedisNode) -> None:
    ledgers = Ledgers(redis_node, in_memory, on_engine)
    one, two = ledgers.new(), ledgers.new()
    now = ledgers.clock.time()
    for i in range(2):
        await one.acquire("key:f", f"held{i}", 3, hold_s=5)
        one.extend(f"held{i}", now + 100 + i)
    await ledgers.drained()
    rivals = {
        f"r{i}": asyncio.create_task((one if i % 2 else two).acquire("key:f", f"r{i}", 3, 5))
        for i in range(10)
    }
    done, running = await asyncio.wait(rivals.values(), return_when=asyncio.FIRST_COMPLETED)
    assert len(done) == 1
    (winner,) = [rfq for rfq, task in rivals.items() if task in done]
    assert rivals[winner].exception() is None
    (one if int(winner[1:]) % 2 else two).extend(winner, now + 90)  # quoted
    answers = await asyncio.gather(*running, return_exceptions=True)
    assert {free_at(a) for a in answers} == {isoformat(from_unix(now + 90))}
    for engine in ledgers.engines:
        await engine.aclose()
