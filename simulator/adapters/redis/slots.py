"""Outstanding-RFQ slots in the shared engine: the `SlotLedger` of several instances, with the
rules of services/rfq/slots.py (the in-memory ledger of one instance) and the same contract
(tests/integration/shared_engine/test_slot_ledger_contract.py runs both).

Keys, under the engine's prefix plus `slots:`:
  pending:<owner>   sorted set: rfq id -> provisional hold end (auction running)
  settled:<owner>   sorted set: rfq id -> latestOrderDeadline (quoted)
  owner             hash: rfq id -> owner (release and extend find the sets by it)
  owners            set: owners with any slot (lapse sweeps and dumps walk it)

Each step is one Lua script, so the check-and-take is atomic across instances. Times are the
caller's simulator clock, passed in (the engine's own clock is never read)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, EngineState, SharedEngine, unreachable
from simulator.clock import Clock
from simulator.services.rfq.slots import Slot, SlotsSaved, over_cap
from simulator.services.shared.state import StateParticipant

# Lapsed slots of one owner go (and their owner index entries), then the owner leaves `owners`
# once it holds none.
_PRUNE = """
local function prune(p, owner, now)
  local owners = p .. 'owner'
  for _, kind in ipairs({'pending:', 'settled:'}) do
    local set = p .. kind .. owner
    local gone = redis.call('ZRANGEBYSCORE', set, '-inf', now)
    for _, rfq in ipairs(gone) do redis.call('HDEL', owners, rfq) end
    if #gone > 0 then redis.call('ZREMRANGEBYSCORE', set, '-inf', now) end
  end
  local held = redis.call('ZCARD', p .. 'pending:' .. owner)
    + redis.call('ZCARD', p .. 'settled:' .. owner)
  if held == 0 then redis.call('SREM', p .. 'owners', owner) end
  return held
end
"""

# ARGV: prefix, owner, rfq id, cap, hold end, now -> {1} taken, or {0, nextSlotFreeAt,
# earliest provisional end or ''} (scores as the engine's exact decimal strings).
_TAKE = (
    _PRUNE
    + """
local p, owner, rfq = ARGV[1], ARGV[2], ARGV[3]
local cap, held_until, now = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
if prune(p, owner, now) < cap then
  redis.call('ZADD', p .. 'pending:' .. owner, held_until, rfq)
  redis.call('HSET', p .. 'owner', rfq, owner)
  redis.call('SADD', p .. 'owners', owner)
  return {1}
end
local settled = redis.call('ZRANGE', p .. 'settled:' .. owner, 0, 0, 'WITHSCORES')
local pending = redis.call('ZRANGE', p .. 'pending:' .. owner, 0, 0, 'WITHSCORES')
return {0, settled[2] or pending[2] or ARGV[6], pending[2] or ''}
"""
)

# ARGV: prefix, rfq id, latestOrderDeadline
_EXTEND = """
local p, rfq = ARGV[1], ARGV[2]
local owner = redis.call('HGET', p .. 'owner', rfq)
if not owner then return 0 end
redis.call('ZREM', p .. 'pending:' .. owner, rfq)
redis.call('ZADD', p .. 'settled:' .. owner, ARGV[3], rfq)
return 1
"""

# ARGV: prefix, rfq id
_RELEASE = """
local p, rfq = ARGV[1], ARGV[2]
local owner = redis.call('HGET', p .. 'owner', rfq)
if not owner then return 0 end
redis.call('HDEL', p .. 'owner', rfq)
redis.call('ZREM', p .. 'pending:' .. owner, rfq)
redis.call('ZREM', p .. 'settled:' .. owner, rfq)
if redis.call('ZCARD', p .. 'pending:' .. owner) + redis.call('ZCARD', p .. 'settled:' .. owner)
    == 0 then
  redis.call('SREM', p .. 'owners', owner)
end
return 1
"""

# ARGV: prefix, now
_EVICT = (
    _PRUNE
    + """
local p, now = ARGV[1], tonumber(ARGV[2])
for _, owner in ipairs(redis.call('SMEMBERS', p .. 'owners')) do prune(p, owner, now) end
return 0
"""
)

# ARGV: prefix -> every slot as a flat list: owner, rfq id, end, settled (0/1), ...
_DUMP = """
local p, out = ARGV[1], {}
for _, owner in ipairs(redis.call('SMEMBERS', p .. 'owners')) do
  for flag, kind in ipairs({'pending:', 'settled:'}) do
    local entries = redis.call('ZRANGE', p .. kind .. owner, 0, -1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      table.insert(out, owner); table.insert(out, entries[i])
      table.insert(out, entries[i + 1]); table.insert(out, flag - 1)
    end
  end
end
return out
"""

# ARGV: prefix, then owner, rfq id, end, settled (0/1) per slot: replaces the whole ledger.
_LOAD = """
local p = ARGV[1]
for _, owner in ipairs(redis.call('SMEMBERS', p .. 'owners')) do
  redis.call('DEL', p .. 'pending:' .. owner, p .. 'settled:' .. owner)
end
redis.call('DEL', p .. 'owner', p .. 'owners')
for i = 2, #ARGV, 4 do
  local owner, rfq, held_until = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local kind = ARGV[i + 3] == '1' and 'settled:' or 'pending:'
  redis.call('ZADD', p .. kind .. owner, held_until, rfq)
  redis.call('HSET', p .. 'owner', rfq, owner)
  redis.call('SADD', p .. 'owners', owner)
end
return 0
"""

# While over the cap with auctions running elsewhere, how often the owner's slots are checked
# again (a change on this instance wakes the waiters at once).
RECHECK_S = 0.05


class SharedSlots:
    """The SlotLedger on the shared engine."""

    def __init__(self, engine: SharedEngine, clock: Clock) -> None:
        self._clock = clock
        self._prefix = engine.prefix + "slots:"
        self._take = engine.script(_TAKE)
        self._extend = engine.script(_EXTEND)
        self._release = engine.script(_RELEASE)
        self._evict = engine.script(_EVICT)
        self._dump = engine.script(_DUMP)
        self._load = engine.script(_LOAD)
        self._writes = engine.ordered_writes()
        # Set (and replaced) when a slot of this instance settles or frees: waiters re-check.
        self._changed = asyncio.Event()

    async def acquire(self, owner: str, rfq_id: str, cap: int, hold_s: float) -> None:
        while True:
            changed = self._changed
            now = self._clock.time()
            try:
                answer: Any = await self._writes.then(
                    self._take, [self._prefix, owner, rfq_id, cap, repr(now + hold_s), repr(now)]
                )
            except UNREACHABLE as exc:
                raise unreachable(exc) from exc
            if answer[0] == 1:
                return
            next_free, pending = float(answer[1]), answer[2]
            if not pending or float(pending) <= now:
                raise over_cap(cap, next_free)
            # Some of the owner's auctions still run (here or on another instance): their
            # quotes will name nextSlotFreeAt, or a no-quote frees a slot.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(float(pending) - now, RECHECK_S)):
                    await changed.wait()

    async def drained(self) -> None:
        """Every extend, release and sweep given so far has reached the engine."""
        await self._writes.drained()

    def _changed_here(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def extend(self, rfq_id: str, held_until: float) -> None:
        self._writes.put(self._extend, [self._prefix, rfq_id, repr(held_until)])
        self._changed_here()

    def release(self, rfq_id: str) -> None:
        self._writes.put(self._release, [self._prefix, rfq_id])
        self._changed_here()

    def evict_lapsed(self) -> None:
        self._writes.put(self._evict, [self._prefix, repr(self._clock.time())])

    def state(self, name: str) -> StateParticipant:
        return EngineState(name, SlotsSaved, self._saved, self._restore)

    def _saved(self) -> SlotsSaved:
        self._writes.apply_now()
        flat: Any = self._dump.run_now([self._prefix])
        # The engine's sets have no order: sorted, so one content always dumps alike.
        slots = sorted(
            (
                Slot(owner=flat[i], rfq_id=flat[i + 1], held_until=float(flat[i + 2]),
                     settled=flat[i + 3] == 1)
                for i in range(0, len(flat), 4)
            ),
            key=lambda slot: (slot.owner, slot.held_until, slot.rfq_id),
        )  # fmt: skip
        by_owner: dict[str, set[str]] = {}
        ends: dict[str, list[tuple[float, str]]] = {}
        for slot in slots:
            by_owner.setdefault(slot.owner, set()).add(slot.rfq_id)
            ends.setdefault(slot.owner, []).append((slot.held_until, slot.rfq_id))
        return SlotsSaved(
            slots={slot.rfq_id: slot for slot in slots},
            by_owner=by_owner,
            ends={owner: sorted(entries) for owner, entries in ends.items()},
        )

    def _restore(self, saved: SlotsSaved) -> None:
        self._writes.apply_now()
        args: list[str | int | float] = [self._prefix]
        for slot in saved.slots.values():
            args += [slot.owner, slot.rfq_id, repr(slot.held_until), int(slot.settled)]
        self._load.run_now(args)
        self._changed_here()
