"""The instances alive on the shared engine, for /_sim/info and the ready file: each instance
writes itself (`here`) and keeps a lease of a few seconds alive while it runs (`keep_alive`);
one that dies drops out of the list when its lease ends, one that stops leaves at once.

Keys, under the engine's prefix: `roster` (hash: id -> {id, pid, api_url} as JSON) and
`roster-alive:<id>` (the lease); `instances` is the counter instances take their number from
(engine.py `join`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, SharedEngine, unreachable
from simulator.services.sim.instances import InstanceEntry

LEASE_MS = 3_000  # an instance that stops renewing drops out after this
RENEW_S = 1.0


class SharedRoster:
    def __init__(self, engine: SharedEngine, instance: int) -> None:
        self._engine = engine
        self._instance = instance
        self._entries = engine.prefix + "roster"
        self._prefix = engine.prefix + "roster-alive:"

        self._entry = ""  # this instance's entry once it listens

    def here(self, api_url: str) -> None:
        self._entry = json.dumps({"id": self._instance, "pid": os.getpid(), "api_url": api_url})
        with self._engine.control.pipeline(transaction=False) as pipe:
            pipe.hset(self._entries, str(self._instance), self._entry)
            pipe.set(self._prefix + str(self._instance), "1", px=LEASE_MS)
            pipe.execute()

    async def keep_alive(self) -> None:
        """Renew the entry and its lease every second until cancelled (an engine that came
        back empty has them again at the next renewal)."""
        while True:
            if self._entry:
                with contextlib.suppress(*UNREACHABLE):
                    async with self._engine.client.pipeline(transaction=False) as pipe:
                        pipe.hset(self._entries, str(self._instance), self._entry)
                        pipe.set(self._prefix + str(self._instance), "1", px=LEASE_MS)
                        await pipe.execute()
            await asyncio.sleep(RENEW_S)

    async def evict(self, instance: int) -> None:
        """`instance` is known gone (its process exited): off the list now, not at the end of
        its lease."""
        try:
            async with self._engine.client.pipeline(transaction=False) as pipe:
                pipe.delete(self._prefix + str(instance))
                pipe.hdel(self._entries, str(instance))
                await pipe.execute()
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc

    def leave(self) -> None:
        with contextlib.suppress(*UNREACHABLE):
            self._engine.control.delete(self._prefix + str(self._instance))
            self._engine.control.hdel(self._entries, str(self._instance))

    async def instances(self) -> list[InstanceEntry]:
        try:
            entries: Any = await self._engine.client.hgetall(self._entries)
            ids = sorted(entries, key=int)
            alive = await self._engine.client.mget([self._prefix + i for i in ids]) if ids else []
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        leased = [i for i, lease in zip(ids, alive, strict=True) if lease]
        return [InstanceEntry(**json.loads(entries[i])) for i in leased]
