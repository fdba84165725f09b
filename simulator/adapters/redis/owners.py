"""Which instance holds each record, in the shared engine: the `RecordOwners` of several
instances. Key, under the engine's prefix: `owner:<record id>` -> the instance's number, kept
as long as the record can be read (`keep_s`); claims and lookups go through the instance's
queue (engine.py `OrderedWrites`), so a claim rides with the request's other checks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, SharedEngine, unreachable

_CLAIM = "redis.call('SET', ARGV[1], ARGV[2], 'PX', ARGV[3])"
_OWNER = "return redis.call('GET', ARGV[1])"


class SharedOwners:
    def __init__(self, engine: SharedEngine, instance: int, keep_s: float) -> None:
        self._instance = str(instance)
        self._keep_ms = str(int(keep_s * 1000))
        self._prefix = engine.prefix + "owner:"
        self._writes = engine.ordered_writes()
        self._claim = engine.script(_CLAIM)
        self._owner = engine.script(_OWNER)

    def claim(self, record_id: str) -> Awaitable[None]:
        answer = self._writes.submit(
            self._claim, [self._prefix + record_id, self._instance, self._keep_ms]
        )
        confirmed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def settle(done: asyncio.Future[Any]) -> None:
            exc = None if done.cancelled() else done.exception()
            if confirmed.done():
                return
            if exc is None:
                confirmed.set_result(None)
            else:
                confirmed.set_exception(unreachable(exc) if isinstance(exc, UNREACHABLE) else exc)
                confirmed.add_done_callback(lambda f: f.exception())  # awaited or not

        answer.add_done_callback(settle)
        return confirmed

    async def owner(self, record_id: str) -> int | None:
        try:
            found = await self._writes.then(self._owner, [self._prefix + record_id])
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return int(found) if found is not None else None
