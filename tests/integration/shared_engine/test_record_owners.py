"""Which instance holds each record, on a real redis-server (adapters/redis/owners.py): the
holder's copies and its live records, a take-over by one survivor only, and the live records
of an instance gone listed until they are taken over."""

from __future__ import annotations

import itertools
from functools import partial

from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.owners import SharedOwners
from simulator.adapters.redis.server import RedisNode

_prefixes = itertools.count()


async def test_a_gone_instance_s_live_records_are_listed_until_taken_over(
    redis_node: RedisNode,
) -> None:
    prefix = f"o{next(_prefixes)}:"
    engines = [SharedEngine(redis_node.url, prefix=prefix) for _ in range(3)]
    owners = [
        SharedOwners(engine, n, keep_s=60, copy_at_rest_s=30) for n, engine in enumerate(engines)
    ]
    try:
        gone = owners[1]
        for record in ("rfq_a", "rfq_b", "rfq_c", "rfq_d"):
            await gone.claim(record)
            await gone.keep(record, partial(str.encode, f'{{"id": "{record}"}}'), live=True)
        await gone.keep("rfq_b", lambda: b'{"id": "rfq_b", "at": "rest"}', live=False)
        gone.rest("rfq_c")  # expired there: no copy, off the live list
        await gone.claim("rfq_e")
        await gone.keep("rfq_e", lambda: b"{}", live=False)  # never live
        assert await owners[0].orphans([0, 1, 2]) == []  # everyone alive
        assert sorted(await owners[0].orphans([0, 2])) == [(1, "rfq_a"), (1, "rfq_d")]

        assert await owners[0].take_over("rfq_a", 1) == b'{"id": "rfq_a"}'
        assert await owners[2].take_over("rfq_a", 1) is None  # one survivor only
        assert await owners[2].owner("rfq_a") == 0
        assert await owners[0].take_over("rfq_b", 1) == b'{"id": "rfq_b", "at": "rest"}'
        assert await owners[0].orphans([0, 2]) == [(1, "rfq_d")]
        # What instance 0 took over live is its own live record now: listed if it goes too.
        assert sorted(await owners[2].orphans([2])) == [(0, "rfq_a"), (1, "rfq_d")]

        assert await owners[2].take_over("rfq_d", 0) is None  # not 0's: left where it is
        assert await owners[2].orphans([0, 2]) == [(1, "rfq_d")]
        assert await owners[2].take_over("rfq_d", 1) == b'{"id": "rfq_d"}'
        assert await owners[2].orphans([0, 2]) == []
        owners[2].forget_live()  # a reset there: what it listed live is gone
        await engines[2].ordered_writes().drained()  # a write goes behind: read once it landed
        assert await owners[0].orphans([0]) == []
        # An instance with nothing live is dropped from the holders once looked at.
        holders = await engines[0].client.smembers(prefix + "live-holders")
        assert sorted(holders) == ["0"]
        # A copy is kept as long as the record while live, `copy_at_rest_s` once at rest.
        client = engines[0].client
        assert 30_000 < await client.pttl(prefix + "copy:rfq_d") <= 60_000  # live when copied
        for at_rest in ("rfq_b", "rfq_c", "rfq_e"):
            assert 0 < await client.pttl(prefix + "copy:" + at_rest) <= 30_000, at_rest
        await client.delete(prefix + "copy:rfq_e")  # lapsed
        assert await owners[0].take_over("rfq_e", 1) is None  # nothing to take: stays 1's
        assert await owners[0].owner("rfq_e") == 1
    finally:
        for engine in engines:
            await engine.aclose()
