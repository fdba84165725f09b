"""Maker holds and nonces in the shared engine: the `HoldLedger` of several instances, with the
rules of services/rfq/inventory.py and the contract of its in-memory ledger
(tests/integration/shared_engine/test_hold_ledger_contract.py runs both).

Keys, under the engine's prefix plus `holds:`, per book (`<chain>|<maker>|<token>`):
  amount:<book>   hash: quote id -> amount held (a decimal string)
  ends:<book>     sorted set: quote id -> until (the quote's expiresAt)
  total           hash: book -> what its live holds commit (a decimal string)
  of              hash: quote id -> book
  nonce           hash: `<chain>|<maker>|<nonce>` -> the quote id holding it
  nonce-of        hash: quote id -> its nonce's field
  hold            hash: quote id -> the whole hold as JSON (dumps read it)
  books           set: books with any hold
  side            hash: quote id -> `<taker's sell token>|<owner>` (the caller whose RFQ holds it)
  by:<book>|<sell token>|<owner>   sorted set: quote id -> until, one owner's holds on a side
  owners:<book>|<sell token>       sorted set: owner -> the earliest until of its holds there

The last three answer "the earliest end of a hold on this side by another caller" by looking
at each owner's earliest hold, not at every hold (a no-quote asks it; under overload, with
tens of thousands of holds live, walking them all made each answer cost the engine
milliseconds).

The check-and-hold is one script, so two instances' auctions never both spend one maker
balance or nonce. What an instance reads back (the holds an RFQ's release ends, so its makers
are told; the holds in one direction) are its own, kept beside in a `MakerInventory`."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic import TypeAdapter

from simulator.adapters.redis.engine import UNREACHABLE, EngineState, SharedEngine, unreachable
from simulator.adapters.redis.lua import DECIMALS
from simulator.clock import Clock
from simulator.services.rfq.inventory import (
    HoldRefusal,
    InventorySaved,
    MakerHold,
    MakerInventory,
)
from simulator.services.shared.state import SavedAttributes, StateParticipant

_HOLD_JSON = TypeAdapter(MakerHold)

_COMMON = (
    DECIMALS
    + """
local function owner_first(p, side, owner)
  local first = redis.call('ZRANGE', p .. 'by:' .. side .. '|' .. owner, 0, 0, 'WITHSCORES')
  if #first == 0 then
    redis.call('ZREM', p .. 'owners:' .. side, owner)
  else
    redis.call('ZADD', p .. 'owners:' .. side, first[2], owner)
  end
end
local function forget(p, quote)
  local book = redis.call('HGET', p .. 'of', quote)
  if not book then return end
  local held = redis.call('HGET', p .. 'side', quote)
  if held then
    local sells, owner = string.match(held, '^([^|]*)|(.*)$')
    local side = book .. '|' .. sells
    redis.call('ZREM', p .. 'by:' .. side .. '|' .. owner, quote)
    owner_first(p, side, owner)
    redis.call('HDEL', p .. 'side', quote)
  end
  local amount = redis.call('HGET', p .. 'amount:' .. book, quote)
  redis.call('HDEL', p .. 'amount:' .. book, quote)
  redis.call('ZREM', p .. 'ends:' .. book, quote)
  redis.call('HDEL', p .. 'of', quote)
  redis.call('HDEL', p .. 'hold', quote)
  local field = redis.call('HGET', p .. 'nonce-of', quote)
  if field and redis.call('HGET', p .. 'nonce', field) == quote then
    redis.call('HDEL', p .. 'nonce', field)
  end
  redis.call('HDEL', p .. 'nonce-of', quote)
  if redis.call('ZCARD', p .. 'ends:' .. book) == 0 then
    redis.call('HDEL', p .. 'total', book)
    redis.call('SREM', p .. 'books', book)
  else
    redis.call('HSET', p .. 'total', book, sub(redis.call('HGET', p .. 'total', book), amount))
  end
end
local function prune(p, book, now)
  for _, quote in ipairs(redis.call('ZRANGEBYSCORE', p .. 'ends:' .. book, '-inf', now)) do
    forget(p, quote)
  end
end
local function put(p, quote, book, amount, field, ends_at, json, sells, owner)
  forget(p, quote)
  local side = book .. '|' .. sells
  redis.call('HSET', p .. 'side', quote, sells .. '|' .. owner)
  redis.call('ZADD', p .. 'by:' .. side .. '|' .. owner, ends_at, quote)
  owner_first(p, side, owner)
  redis.call('HSET', p .. 'amount:' .. book, quote, amount)
  redis.call('ZADD', p .. 'ends:' .. book, ends_at, quote)
  redis.call('HSET', p .. 'total', book, add(redis.call('HGET', p .. 'total', book) or '0', amount))
  redis.call('HSET', p .. 'of', quote, book)
  redis.call('HSET', p .. 'nonce', field, quote)
  redis.call('HSET', p .. 'nonce-of', quote, field)
  redis.call('HSET', p .. 'hold', quote, json)
  redis.call('SADD', p .. 'books', book)
end
"""
)

# ARGV: prefix, quote id, book, amount, nonce field, until, balance, allowance, now, hold JSON,
# the taker's sell token, the owner
# -> {'ok'} | {'nonce_used', '0'} | {'underfunded' or 'allowance', committed}
_TRY_HOLD = (
    _COMMON
    + """
local p, quote, book, amount, field = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local now = tonumber(ARGV[9])
prune(p, book, now)
local holder = redis.call('HGET', p .. 'nonce', field)
if holder then
  local holder_book = redis.call('HGET', p .. 'of', holder)
  local ends = holder_book and redis.call('ZSCORE', p .. 'ends:' .. holder_book, holder)
  if ends and tonumber(ends) > now then return {'nonce_used', '0'} end
  forget(p, holder)
end
local committed = redis.call('HGET', p .. 'total', book) or '0'
local needed = add(committed, amount)
if less(ARGV[7], needed) then return {'underfunded', committed} end
if less(ARGV[8], needed) then return {'allowance', committed} end
put(p, quote, book, amount, field, ARGV[6], ARGV[10], ARGV[11], ARGV[12])
return {'ok'}
"""
)

# ARGV: prefix, quote ids...
_RELEASE = (
    _COMMON
    + """
for i = 2, #ARGV do forget(ARGV[1], ARGV[i]) end
return 0
"""
)

# ARGV: prefix, until, then quote id and its hold's JSON (with the new until) per hold
_SET_UNTIL = (
    _COMMON
    + """
local p = ARGV[1]
for i = 3, #ARGV, 2 do
  local book = redis.call('HGET', p .. 'of', ARGV[i])
  if book then
    redis.call('ZADD', p .. 'ends:' .. book, 'XX', ARGV[2], ARGV[i])
    redis.call('HSET', p .. 'hold', ARGV[i], ARGV[i + 1])
    local held = redis.call('HGET', p .. 'side', ARGV[i])
    if held then
      local sells, owner = string.match(held, '^([^|]*)|(.*)$')
      local side = book .. '|' .. sells
      redis.call('ZADD', p .. 'by:' .. side .. '|' .. owner, 'XX', ARGV[2], ARGV[i])
      owner_first(p, side, owner)
    end
  end
end
return 0
"""
)

# ARGV: prefix, chain id, the maker-given token, the taker's sell token, the owner to pass
# over ('' for none), now, then the makers -> the earliest end of a live hold in that direction
# by one of them of an RFQ the owner does not have, or false. Per maker, the owners on that side
# are looked at in the order of their earliest hold, each one's first live hold read, until an
# owner's earliest is no sooner than the best found: a few look-ups, however many holds live.
_EARLIEST_END = """
local p, chain, token, sells, other, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local best, best_text = nil, nil
for i = 7, #ARGV do
  local side = chain .. '|' .. ARGV[i] .. '|' .. token .. '|' .. sells
  local offset = 0
  while true do
    -- owners by the earliest until of their holds (a hold past its end and not yet pruned
    -- keeps its owner's score low: that owner's first live hold is looked up)
    local page = redis.call(
      'ZRANGEBYSCORE', p .. 'owners:' .. side, '-inf', '+inf', 'WITHSCORES', 'LIMIT', offset, 16)
    if #page == 0 then break end
    local done = false
    for j = 1, #page, 2 do
      local owner, low = page[j], tonumber(page[j + 1])
      if best ~= nil and low >= best then done = true break end
      if other == '' or owner ~= other then
        local first = redis.call('ZRANGEBYSCORE', p .. 'by:' .. side .. '|' .. owner,
          '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
        if #first > 0 then
          local at = tonumber(first[2])
          if best == nil or at < best then best, best_text = at, first[2] end
        end
      end
    end
    if done then break end
    offset = offset + 16
  end
end
if best == nil then return false end
return best_text
"""

# ARGV: prefix, chain id, the maker-given token, the taker's sell token, now -> the earliest
# `held_at` of a live hold in that direction, or false (walks every live hold there: the feed
# asks only when a side has no price)
_RESERVED_SINCE = """
local p, chain, token, sells, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local best = nil
for _, book in ipairs(redis.call('SMEMBERS', p .. 'books')) do
  local at, gives = string.match(book, '^([^|]*)|[^|]*|(.*)$')
  if at == chain and gives == token then
    for _, quote in ipairs(redis.call('ZRANGEBYSCORE', p .. 'ends:' .. book, '(' .. now, '+inf')) do
      local json = redis.call('HGET', p .. 'hold', quote)
      if json then
        local hold = cjson.decode(json)
        if hold['sell_token'] == sells and (best == nil or hold['held_at'] < best) then
          best = hold['held_at']
        end
      end
    end
  end
end
if best == nil then return false end
return tostring(best)
"""

# ARGV: prefix -> every hold's JSON
_DUMP = """
return redis.call('HVALS', ARGV[1] .. 'hold')
"""

# ARGV: prefix, then quote id, book, amount, nonce field, until, JSON per hold: replaces all.
_LOAD = (
    _COMMON
    + """
local p = ARGV[1]
for _, quote in ipairs(redis.call('HKEYS', p .. 'of')) do forget(p, quote) end
for _, book in ipairs(redis.call('SMEMBERS', p .. 'books')) do
  redis.call('DEL', p .. 'amount:' .. book, p .. 'ends:' .. book)
end
redis.call('DEL', p .. 'total', p .. 'of', p .. 'nonce', p .. 'nonce-of', p .. 'hold', p .. 'books',
  p .. 'side')
for i = 2, #ARGV, 8 do
  put(p, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5],
    ARGV[i + 6], ARGV[i + 7])
end
return 0
"""
)


def _book(hold: MakerHold) -> str:
    return f"{hold.chain_id}|{hold.maker}|{hold.token}"


def _nonce(hold: MakerHold) -> str:
    return f"{hold.chain_id}|{hold.maker}|{hold.nonce}"


def _json(hold: MakerHold) -> str:
    return _HOLD_JSON.dump_json(hold).decode()


class SharedHolds:
    """The HoldLedger on the shared engine."""

    def __init__(self, engine: SharedEngine, clock: Clock) -> None:
        self._clock = clock
        self._prefix = engine.prefix + "holds:"
        self._local = MakerInventory(clock)  # this instance's holds, for what it reads back
        self._try_hold = engine.script(_TRY_HOLD)
        self._release = engine.script(_RELEASE)
        self._set_until = engine.script(_SET_UNTIL)
        self._dump = engine.script(_DUMP)
        self._load = engine.script(_LOAD)
        self._earliest_end = engine.script(_EARLIEST_END)
        self._reserved_since = engine.script(_RESERVED_SINCE)
        self._writes = engine.ordered_writes()

    async def try_hold(self, hold: MakerHold, balance: int, allowance: int) -> HoldRefusal | None:
        now = self._clock.time()
        hold.held_at = now
        args = [self._prefix, hold.quote_id, _book(hold), str(hold.amount), _nonce(hold)]
        try:
            answer: Any = await self._writes.then(
                self._try_hold,
                [
                    *args,
                    repr(hold.until),
                    str(balance),
                    str(allowance),
                    repr(now),
                    _json(hold),
                    hold.sell_token,
                    hold.owner,
                ],
            )
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        if answer[0] != "ok":
            return HoldRefusal(answer[0], int(answer[1]))
        self._local.hold(hold)
        return None

    async def drained(self) -> None:
        """Every release and extension given so far has reached the engine."""
        await self._writes.drained()

    def release_quote(self, quote_id: str) -> None:
        self._local.release_quote(quote_id)
        self._writes.put(self._release, [self._prefix, quote_id])

    def release_rfq(self, rfq_id: str) -> list[MakerHold]:
        released = self._local.release_rfq(rfq_id)
        if released:
            self._writes.put(self._release, [self._prefix, *(h.quote_id for h in released)])
        return released

    def set_until(self, rfq_id: str, until: float) -> None:
        self._local.set_until(rfq_id, until)
        args: list[str | int | float] = [self._prefix, repr(until)]
        for hold in self._local.holds_of(rfq_id):
            args += [hold.quote_id, _json(hold)]
        if len(args) > 2:
            self._writes.put(self._set_until, args)

    def holds_for(self, chain_id: int, sell_token: str, buy_token: str) -> list[MakerHold]:
        return self._local.holds_for(chain_id, sell_token, buy_token)

    async def reserved_since(self, chain_id: int, sell_token: str, buy_token: str) -> float | None:
        args = [
            self._prefix,
            str(chain_id),
            buy_token.lower(),
            sell_token.lower(),
            repr(self._clock.time()),
        ]
        return await self._moment(self._reserved_since, args)

    async def earliest_end(
        self,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        makers: Collection[str],
        other_than: str | None,
    ) -> float | None:
        if not makers:
            return None
        args = [
            self._prefix,
            str(chain_id),
            buy_token.lower(),
            sell_token.lower(),
            other_than or "",
            repr(self._clock.time()),
            *sorted(makers),
        ]
        return await self._moment(self._earliest_end, args)

    async def _moment(self, script: Any, args: list[str]) -> float | None:
        """A read script's answer: a moment (simulator time), or none."""
        try:
            found: Any = await self._writes.then(script, args)
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return float(found) if found else None

    def state(self, name: str) -> StateParticipant:
        return EngineState(name, InventorySaved, self._saved, self._restore)

    def _saved(self) -> InventorySaved:
        self._writes.apply_now()
        every: Any = self._dump.run_now([self._prefix])
        holds = sorted((_HOLD_JSON.validate_json(text) for text in every), key=lambda h: h.quote_id)
        view = MakerInventory(self._clock)  # the holds with the in-memory ledger's indexes
        for hold in holds:
            held_at = hold.held_at
            view.hold(hold)
            hold.held_at = held_at
        return InventorySaved.model_validate(view)

    def _restore(self, saved: InventorySaved) -> None:
        self._writes.apply_now()
        args: list[str | int | float] = [self._prefix]
        for hold in saved.holds.values():
            args += [hold.quote_id, _book(hold), str(hold.amount), _nonce(hold)]
            args += [repr(hold.until), _json(hold), hold.sell_token, hold.owner]
        self._load.run_now(args)
        SavedAttributes("local", self._local, InventorySaved).load(saved.model_dump(mode="json"))
