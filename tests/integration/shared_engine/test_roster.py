"""The venue's instances as /_sim/info lists them, on a real redis-server: each listed once it
listens, gone at once when it stops, gone when its lease ends if it dies."""

from __future__ import annotations

import asyncio
import itertools
import os

from rfqkit.tasks import cancel_and_wait
from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.roster import SharedRoster
from simulator.adapters.redis.server import RedisNode
from simulator.services.sim.instances import InstanceEntry

_prefixes = itertools.count()


async def test_instances_come_leave_and_lapse(redis_node: RedisNode) -> None:
    prefix = f"r{next(_prefixes)}:"
    engines = [SharedEngine(redis_node.url, prefix=prefix) for _ in range(3)]
    rosters = [SharedRoster(engine, n) for n, engine in enumerate(engines)]
    for n, roster in enumerate(rosters):
        roster.here(f"http://127.0.0.1:{8080 + n}")
    assert await rosters[1].instances() == [
        InstanceEntry(id=n, pid=os.getpid(), api_url=f"http://127.0.0.1:{8080 + n}")
        for n in range(3)
    ]
    rosters[2].leave()  # stopped: gone at once
    assert [i.id for i in await rosters[0].instances()] == [0, 1]
    renewing = asyncio.create_task(rosters[1].keep_alive())  # 0 "dies": it renews nothing
    try:
        for _ in range(200):  # bounded: the lease ends 3 s after it was last renewed
            if [i.id for i in await rosters[1].instances()] == [1]:
                break
            await asyncio.sleep(0.05)
        assert [i.id for i in await rosters[1].instances()] == [1]
    finally:
        await cancel_and_wait([renewing])
    for engine in engines:
        await engine.aclose()
