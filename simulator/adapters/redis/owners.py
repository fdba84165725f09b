"""Which instance holds each record, in the shared engine: the `RecordOwners` of several
instances. Keys, under the engine's prefix: `owner:<record id>` -> the instance's number, and
`copy:<record id>` -> the record's last copy, the first kept as long as the record can be read
(`keep_s`), the second as long while the record is live and `copy_at_rest_s` once it came to
rest; `live:<instance>` (a set) -> the ids of its records still live when last copied,
and `live-holders` (a set) -> the instances that listed one. Claims, copies and lookups go
through the instance's queue (engine.py `OrderedWrites`), so a claim rides with the request's
other checks. A take-over is one script: the record leaves the gone holder's live records (and
joins the new one's if it was there), the holder named is checked and replaced, and the copy
read, at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, Arg, SharedEngine, unreachable

_SET = "redis.call('SET', ARGV[1], ARGV[2], 'PX', ARGV[3])"
# ARGV: copy key, the copy, keep ms (live) or the time kept at rest, this instance's live key,
# record id, '1' if live, the holders key, this instance
_KEEP = """
redis.call('SET', ARGV[1], ARGV[2], 'PX', ARGV[3])
if ARGV[6] == '1' then
  redis.call('SADD', ARGV[4], ARGV[5])
  redis.call('SADD', ARGV[7], ARGV[8])
else
  redis.call('SREM', ARGV[4], ARGV[5])
end
"""
# ARGV: this instance's live key, record id, copy key, the time a copy is kept at rest
_REST = """
redis.call('SREM', ARGV[1], ARGV[2])
redis.call('PEXPIRE', ARGV[3], ARGV[4])
"""
_FORGET_LIVE = "redis.call('DEL', ARGV[1])"
_OWNER = "return redis.call('GET', ARGV[1])"
# ARGV: owner key, the holder gone, this instance, keep ms, copy key, the gone holder's live
# key, this instance's live key, record id, the holders key -> the copy, or false
_TAKE_OVER = """
local was_live = redis.call('SREM', ARGV[6], ARGV[8]) == 1
if redis.call('GET', ARGV[1]) ~= ARGV[2] then return false end
local copy = redis.call('GET', ARGV[5])
if not copy then return false end
redis.call('SET', ARGV[1], ARGV[3], 'PX', ARGV[4])
if was_live then
  redis.call('SADD', ARGV[7], ARGV[8])
  redis.call('SADD', ARGV[9], ARGV[3])
end
return copy
"""
# ARGV: the live keys' prefix, the holders key, batch size, the instances alive...
# -> holder, record id, holder, record id, ... (a holder with none left is dropped)
_ORPHANS = """
local alive = {}
for i = 4, #ARGV do alive[ARGV[i]] = true end
local found = {}
for _, holder in ipairs(redis.call('SMEMBERS', ARGV[2])) do
  if not alive[holder] then
    local ids = redis.call('SRANDMEMBER', ARGV[1] .. holder, ARGV[3])
    if #ids == 0 then redis.call('SREM', ARGV[2], holder) end
    for _, id in ipairs(ids) do
      table.insert(found, holder)
      table.insert(found, id)
    end
  end
end
return found
"""
ORPHANS_BATCH = 100  # per gone instance and call


class SharedOwners:
    def __init__(
        self, engine: SharedEngine, instance: int, keep_s: float, copy_at_rest_s: float
    ) -> None:
        self._instance = str(instance)
        self._keep_ms = str(int(keep_s * 1000))
        self._at_rest_ms = str(int(min(copy_at_rest_s, keep_s) * 1000))
        self._prefix = engine.prefix + "owner:"
        self._copies = engine.prefix + "copy:"
        self._live = engine.prefix + "live:"
        self._live_here = self._live + self._instance
        self._holders = engine.prefix + "live-holders"
        self._writes = engine.ordered_writes()
        self._set = engine.script(_SET)
        self._keep = engine.script(_KEEP)
        self._rest = engine.script(_REST)
        self._forget_live = engine.script(_FORGET_LIVE)
        self._owner = engine.script(_OWNER)
        self._take_over = engine.script(_TAKE_OVER)
        self._orphans = engine.script(_ORPHANS)

    def claim(self, record_id: str) -> Awaitable[None]:
        args = [self._prefix + record_id, self._instance, self._keep_ms]
        return self._confirmed(self._writes.submit(self._set, args))

    def keep(self, record_id: str, copy: Callable[[], bytes], live: bool) -> Awaitable[None]:
        """Done once the copy is on the engine's connection, not answered: the kernel delivers
        it even if this process dies next (a firm answer waits for it, not for a round trip)."""
        kept_ms = self._keep_ms if live else self._at_rest_ms
        args: list[Arg] = [self._copies + record_id, copy(), kept_ms, self._live_here, record_id]
        return self._confirmed(
            self._writes.send(
                self._keep, [*args, "1" if live else "0", self._holders, self._instance]
            )
        )

    def rest(self, record_id: str) -> None:
        args = [self._live_here, record_id, self._copies + record_id, self._at_rest_ms]
        self._writes.put(self._rest, args)

    def forget_live(self) -> None:
        self._writes.put(self._forget_live, [self._live_here])

    def _confirmed(self, answer: asyncio.Future[Any]) -> Awaitable[None]:
        """A write sent at once: done when `answer` is (harmless never awaited); the engine not
        answering is the venue's 503."""
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
        live = [self._live + str(holder), self._live_here, record_id, self._holders]
        try:
            found = await self._writes.then(
                self._take_over, [*args, self._copies + record_id, *live]
            )
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return str(found).encode() if found else None  # JSON text (responses are decoded)

    async def orphans(self, alive: Collection[int]) -> list[tuple[int, str]]:
        args = [self._live, self._holders, str(ORPHANS_BATCH), *map(str, alive)]
        try:
            found = await self._writes.then(self._orphans, args)
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return [(int(found[i]), str(found[i + 1])) for i in range(0, len(found), 2)]
