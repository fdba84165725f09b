"""The Idempotency-Key records' contract, run against both stores on a clock the test moves: in
memory (one instance) and on a real redis-server (several). Claims, the key in flight, the
stored answer and its 24 h, release, eviction; the rules are services/shared/idempotency.py's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.idempotency import SharedIdempotency
from simulator.adapters.redis.server import RedisNode
from simulator.clock import Clock
from simulator.services.shared.idempotency import (
    IdempotencyLedger,
    IdempotencyScope,
    IdempotencyStore,
    StoredResponse,
)
from simulator.services.shared.state import StateFormatError
from tests.integration.shared_engine.ledgers import KINDS, Ledgers, ledgers_of

DAY = 86_400.0
Records = Ledgers[IdempotencyLedger]


class ManualClock(Clock):
    def __init__(self) -> None:
        super().__init__()
        self.at = 1_000_000.0

    def time(self) -> float:
        return self.at


def in_memory(clock: Clock) -> IdempotencyLedger:
    return IdempotencyStore(clock, ttl_s=DAY, max_records=2)


def on_engine(engine: SharedEngine, clock: Clock) -> IdempotencyLedger:
    return SharedIdempotency(engine, clock, ttl_s=DAY, max_records=2)


@pytest.fixture(params=KINDS)
async def ledgers(request: pytest.FixtureRequest) -> AsyncIterator[Records]:
    async with ledgers_of(request, in_memory, on_engine, ManualClock()) as made:
        yield made


def clock_of(ledgers: Records) -> ManualClock:
    assert isinstance(ledgers.clock, ManualClock)
    return ledgers.clock


def scope(key: str = "k1", caller: str = "key:tx_test_000000000001") -> IdempotencyScope:
    return IdempotencyScope(caller=caller, method="POST", path="/v1/webhooks", key=key)


def answer(status: int = 201, body: bytes = b'{"data":{}}') -> StoredResponse:
    return StoredResponse(status, (("Content-Type", "application/json"),), body, "req_1")


async def test_first_request_claims_and_a_second_sees_it_in_flight_then_finished(
    ledgers: Records,
) -> None:
    store = ledgers.new()
    claimed, record = await store.begin(scope())
    assert claimed
    assert record.in_flight
    store.fingerprinted(record, "f" * 64)
    again, same = await store.begin(scope())
    assert (again, same) == (False, record)
    assert same.in_flight
    await store.finish(record, answer(body=b"\xff\x00 not utf-8"))
    store.release(record)  # a no-op once finished
    claimed_later, stored = await store.begin(scope())
    assert not claimed_later
    assert stored.response == answer(body=b"\xff\x00 not utf-8")
    assert stored.fingerprint == "f" * 64


async def test_scope_is_caller_method_path_and_key(ledgers: Records) -> None:
    store = ledgers.new()
    assert (await store.begin(scope()))[0]
    assert (await store.begin(scope(key="k|2")))[0]
    assert (await store.begin(scope(caller="key:tx_test_000000000002")))[0]
    other_path = IdempotencyScope("key:tx_test_000000000001", "POST", "/v1/swaps", "k1")
    assert (await store.begin(other_path))[0]
    assert not (await store.begin(scope()))[0]


async def test_released_key_is_free_again(ledgers: Records) -> None:
    store, clock = ledgers.new(), clock_of(ledgers)
    _, record = await store.begin(scope())
    store.release(record)
    clock.at += 1
    claimed, fresh = await store.begin(scope())
    assert claimed
    assert fresh.created_at == record.created_at + 1
    assert await store.records() == [fresh]


async def test_answer_is_kept_for_the_ttl_on_the_simulator_clock(ledgers: Records) -> None:
    store, clock = ledgers.new(), clock_of(ledgers)
    _, record = await store.begin(scope())
    await store.finish(record, answer())
    assert store.expires_at(record) == clock.at + DAY
    clock.at += DAY - 0.001
    assert await store.begin(scope()) == (False, record)
    clock.at += 0.001
    claimed, fresh = await store.begin(scope())
    assert claimed
    assert fresh.created_at != record.created_at
    await store.finish(record, answer(status=200))  # the expired record cannot come back
    assert await store.records() == [fresh]
    assert (await store.begin(scope()))[1].response is None


async def test_eviction_drops_the_oldest_finished_records_first(ledgers: Records) -> None:
    store, clock = ledgers.new(), clock_of(ledgers)  # at most 2 records
    _, first = await store.begin(scope("a"))
    await store.finish(first, answer())
    clock.at += 1
    _, second = await store.begin(scope("b"))
    clock.at += 1
    _, third = await store.begin(scope("c"))
    assert await store.records() == [second, third]
    # In-flight records at the front are kept: their requests are still being answered.
    clock.at += 1
    _, fourth = await store.begin(scope("d"))
    assert await store.records() == [second, third, fourth]


async def test_the_state_round_trips_and_a_foreign_one_changes_nothing(
    ledgers: Records,
) -> None:
    store, clock = ledgers.new(), clock_of(ledgers)
    _, done = await store.begin(scope("a"))
    store.fingerprinted(done, "e" * 64)
    await store.finish(done, answer(body=b"\x80binary"))
    clock.at += 0.25
    _, running = await store.begin(scope("b"))
    state = store.state("idempotency")
    saved = state.dump()
    assert [pair[1]["created_at"] for pair in saved["records"]] == [1_000_000.0, 1_000_000.25]
    store.release(running)
    state.load({"records": []})
    assert await store.records() == []
    state.load(saved)
    assert state.dump() == saved
    with pytest.raises(StateFormatError):
        state.load({"records": [[{"caller": 1}, {}]]})
    assert state.dump() == saved
    assert await store.begin(scope("a")) == (False, done)


async def test_two_instances_claim_a_key_once_and_replay_each_others_answer(
    redis_node: RedisNode,
) -> None:
    ledgers: Records = Ledgers(redis_node, in_memory, on_engine, ManualClock())
    one, two = ledgers.new(), ledgers.new()
    claims = await asyncio.gather(*((one if i % 2 else two).begin(scope()) for i in range(8)))
    assert [claimed for claimed, _ in claims].count(True) == 1
    (record,) = [record for claimed, record in claims if claimed]
    owner = one if claims.index((True, record)) % 2 else two
    await owner.finish(record, answer())
    for store in (one, two):
        claimed, seen = await store.begin(scope())
        assert (claimed, seen.response) == (False, answer())
    for engine in ledgers.engines:
        await engine.aclose()
