"""The instance's ordered queue to the engine (adapters/redis/engine.py `OrderedWrites`) on a
real redis-server: writes and checks applied in the order given (a check reads every write
queued before it, none queued after), a script the engine lost loaded again, a lost
connection failing what waited on it while the next check reconnects, and a write sent (`send`)
done once it is on the connection, not when answered."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import redis

from simulator.adapters.redis.engine import EngineScript, OrderedWrites, SharedEngine
from simulator.adapters.redis.server import RedisNode, start_redis

_prefixes = itertools.count()

_APPEND = "return redis.call('RPUSH', ARGV[1], ARGV[2])"
_READ = "return redis.call('LRANGE', ARGV[1], 0, -1)"


@dataclass
class Queue:
    engine: SharedEngine
    writes: OrderedWrites
    key: str  # a list the scripts below append to and read
    append: EngineScript
    read: EngineScript


@pytest.fixture
async def queue(redis_node: RedisNode) -> AsyncIterator[Queue]:
    engine = SharedEngine(redis_node.url, prefix=f"w{next(_prefixes)}:")
    try:
        yield Queue(
            engine,
            engine.ordered_writes(),
            engine.prefix + "log",
            engine.script(_APPEND),
            engine.script(_READ),
        )
    finally:
        await engine.aclose()


async def test_writes_and_checks_land_in_the_order_given(queue: Queue) -> None:
    writes, key, append, read = queue.writes, queue.key, queue.append, queue.read
    writes.put(append, [key, "w1"])
    first = writes.submit(append, [key, "c1"])  # behind the write before it
    writes.put(append, [key, "w2"])
    second = writes.submit(read, [key])
    writes.put(append, [key, "w3"])  # after the read: not in its answer
    assert await second == ["w1", "c1", "w2"]
    assert await first == 2
    await writes.drained()
    assert await queue.engine.client.lrange(key, 0, -1) == ["w1", "c1", "w2", "w3"]


async def test_a_script_the_engine_lost_is_loaded_and_sent_again(queue: Queue) -> None:
    writes, key, append, read = queue.writes, queue.key, queue.append, queue.read
    assert await writes.then(append, [key, "before"]) == 1
    await queue.engine.client.script_flush()  # as an engine restarted without its scripts
    writes.put(append, [key, "lost-and-sent-again"])
    assert await writes.then(append, [key, "checked"]) >= 2
    await writes.drained()
    assert sorted(await writes.then(read, [key])) == ["before", "checked", "lost-and-sent-again"]


async def test_a_lost_connection_fails_what_waits_and_the_next_check_reconnects(
    queue: Queue,
) -> None:
    writes, key, append, engine = queue.writes, queue.key, queue.append, queue.engine
    assert await writes.then(append, [key, "first"]) == 1
    (ours,) = [c for c in await engine.client.client_list() if c["cmd"] == "evalsha"]
    # Dropped by the engine (through the blocking client: the loop does not run meanwhile, so
    # the check is sent on the dropped connection).
    assert engine.control.client_kill_filter(_id=ours["id"]) == 1
    waiting = writes.submit(append, [key, "lost"])
    with pytest.raises(redis.ConnectionError):
        await waiting
    assert await writes.then(append, [key, "after"]) == 2  # a new connection
    await writes.drained()


async def test_a_sent_write_is_done_once_on_the_connection_not_when_answered(
    queue: Queue,
) -> None:
    writes, key, append, read = queue.writes, queue.key, queue.append, queue.read
    assert await writes.then(append, [key, "first"]) == 1
    # The engine holds every write and script until unpaused (not the unpause).
    queue.engine.control.client_pause(10_000, all=False)
    try:
        sent = writes.send(append, [key, "sent"])
        answer = writes.submit(read, [key])  # in the same round trip, after it
        await sent
        assert not answer.done()  # written, not answered
    finally:
        queue.engine.control.client_unpause()
    assert await answer == ["first", "sent"]


async def test_a_write_that_cannot_be_sent_says_the_engine_is_not_there() -> None:
    node = start_redis()
    engine = SharedEngine(node.url, prefix="w:")
    try:
        node.stop()
        with pytest.raises(redis.ConnectionError):
            await engine.ordered_writes().send(engine.script(_APPEND), ["w:log", "lost"])
    finally:
        await engine.aclose()
