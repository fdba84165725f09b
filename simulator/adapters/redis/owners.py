"""Which instance holds each record, in the shared engine: the `RecordOwners` of several
instances. Keys, under the engine's prefix: `owner:<record id>` -> the instance's number, and
`copy:<record id>` -> the record's last copy, each kept as long as the record can be read
(`keep_s`); claims, copies and lookups go through the instance's queue (engine.py
`OrderedWrites`), so a claim rides with the request's other checks. A take-over is one script:
the holder named is checked and replaced, and the copy read, at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, SharedEngine, unreachable

_SET = "redis.call('SET', ARGV[1], ARGV[2], 'PX', ARGV[3])"
_OWNER = "return redis.call('GET', ARGV[1])"
# ARGV: owner key, the holder gone, this instance, keep ms, copy key -> the copy, or false
_TAKE_OVER = """
if redis.call('GET', ARGV[1]) ~= ARGV[2] then return false end
redis.call('SET', ARGV[1], ARGV[3], 'PX', ARGV[4])
return redis.call('GET', ARGV[5])
"""


class SharedOwners:
    def __init__(self, engine: SharedEngine, instance: int, keep_s: float) -> None:
        self._instance = str(instance)
        self._keep_ms = str(int(keep_s * 1000))
        self._prefix = engine.prefix + "owner:"
        self._copies = engine.prefix + "copy:"
        self._writes = engine.ordered_writes()
        self._set = engine.script(_SET)
        self._owner = engine.script(_OWNER)
        self._take_over = engine.script(_TAKE_OVER)

    def claim(self, record_id: str) -> Awaitable[None]:
        return self._confirmed([self._prefix + record_id, self._instance, self._keep_ms])

    def keep(self, record_id: str, copy: Callable[[], bytes]) -> Awaitable[None]:
        return self._confirmed([self._copies + record_id, copy(), self._keep_ms])

    def _confirmed(self, args: list[Any]) -> Awaitable[None]:
        """One SET sent at once; confirmed when awaited (and harmless never awaited)."""
        answer = self._writes.submit(self._set, args)
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

    async def take_over(self, record_id: str, holder: int) -> bytes | None:
        args = [self._prefix + record_id, str(holder), self._instance, self._keep_ms]
        try:
            found = await self._writes.then(self._take_over, [*args, self._copies + record_id])
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return str(found).encode() if found else None  # JSON text (responses are decoded)
