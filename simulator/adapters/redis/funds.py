"""Taker reservations in the shared engine: the `ReservationLedger` of several instances, with the
rules of services/rfq/funds.py and the contract of its in-memory ledger
(tests/integration/shared_engine/test_reservation_ledger_contract.py runs both).

Keys, under the engine's prefix plus `funds:`, per wallet (`<chain>|<taker>|<token>`):
  amount:<wallet>   hash: rfq id -> amount reserved (a decimal string)
  ends:<wallet>     sorted set: rfq id -> end of the reservation
  total             hash: wallet -> what its live reservations commit (a decimal string)
  of                hash: rfq id -> wallet (hold and release find the wallet by it)
  wallets           set: wallets with any reservation (lapse sweeps and dumps walk it)

Token amounts exceed what a Lua number (a double) or Redis's 64-bit integers hold exactly (one
whole 18-decimal token is 10^18), so the scripts add, subtract and compare them as decimal
strings. The check-and-reserve is one script: two instances never both spend one balance."""

from __future__ import annotations

from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, EngineState, SharedEngine, unreachable
from simulator.adapters.redis.lua import DECIMALS
from simulator.clock import Clock
from simulator.services.rfq.funds import FundsSaved, Reservation, WalletToken
from simulator.services.shared.state import StateParticipant

# The pruning of one wallet's lapsed reservations.
_COMMON = (
    DECIMALS
    + """
local function forget(p, wallet, rfq)
  local amount = redis.call('HGET', p .. 'amount:' .. wallet, rfq)
  if not amount then return end
  local total = sub(redis.call('HGET', p .. 'total', wallet) or '0', amount)
  redis.call('HDEL', p .. 'amount:' .. wallet, rfq)
  redis.call('ZREM', p .. 'ends:' .. wallet, rfq)
  redis.call('HDEL', p .. 'of', rfq)
  if redis.call('ZCARD', p .. 'ends:' .. wallet) == 0 then
    redis.call('HDEL', p .. 'total', wallet)
    redis.call('SREM', p .. 'wallets', wallet)
  else
    redis.call('HSET', p .. 'total', wallet, total)
  end
end
local function prune(p, wallet, now)
  for _, rfq in ipairs(redis.call('ZRANGEBYSCORE', p .. 'ends:' .. wallet, '-inf', now)) do
    forget(p, wallet, rfq)
  end
  return redis.call('HGET', p .. 'total', wallet) or '0'
end
"""
)

# ARGV: prefix, rfq id, wallet, required, end, balance, now -> {1} reserved, or {0, committed}
_RESERVE = (
    _COMMON
    + """
local p, rfq, wallet, required = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local committed = prune(p, wallet, tonumber(ARGV[7]))
if redis.call('HGET', p .. 'of', rfq) == wallet then
  committed = sub(committed, redis.call('HGET', p .. 'amount:' .. wallet, rfq))
end
if less(ARGV[6], add(committed, required)) then return {0, committed} end
local before = redis.call('HGET', p .. 'of', rfq)
if before then forget(p, before, rfq) end
redis.call('HSET', p .. 'amount:' .. wallet, rfq, required)
redis.call('ZADD', p .. 'ends:' .. wallet, ARGV[5], rfq)
redis.call('HSET', p .. 'of', rfq, wallet)
local total = redis.call('HGET', p .. 'total', wallet) or '0'
redis.call('HSET', p .. 'total', wallet, add(total, required))
redis.call('SADD', p .. 'wallets', wallet)
return {1}
"""
)

# ARGV: prefix, wallet, now -> committed
_COMMITTED = (
    _COMMON
    + """
return prune(ARGV[1], ARGV[2], tonumber(ARGV[3]))
"""
)

# ARGV: prefix, rfq id, amount, end
_HOLD = (
    _COMMON
    + """
local p, rfq, amount = ARGV[1], ARGV[2], ARGV[3]
local wallet = redis.call('HGET', p .. 'of', rfq)
if not wallet then return 0 end
local before = redis.call('HGET', p .. 'amount:' .. wallet, rfq)
local total = add(sub(redis.call('HGET', p .. 'total', wallet), before), amount)
redis.call('HSET', p .. 'total', wallet, total)
redis.call('HSET', p .. 'amount:' .. wallet, rfq, amount)
redis.call('ZADD', p .. 'ends:' .. wallet, ARGV[4], rfq)
return 1
"""
)

# ARGV: prefix, rfq id
_RELEASE = (
    _COMMON
    + """
local wallet = redis.call('HGET', ARGV[1] .. 'of', ARGV[2])
if wallet then forget(ARGV[1], wallet, ARGV[2]) end
return 0
"""
)

# ARGV: prefix, now
_EVICT = (
    _COMMON
    + """
for _, wallet in ipairs(redis.call('SMEMBERS', ARGV[1] .. 'wallets')) do
  prune(ARGV[1], wallet, tonumber(ARGV[2]))
end
return 0
"""
)

# ARGV: prefix -> wallet, rfq id, amount, end, ... for every reservation
_DUMP = """
local p, out = ARGV[1], {}
for _, wallet in ipairs(redis.call('SMEMBERS', p .. 'wallets')) do
  local ends = redis.call('ZRANGE', p .. 'ends:' .. wallet, 0, -1, 'WITHSCORES')
  for i = 1, #ends, 2 do
    out[#out + 1] = wallet
    out[#out + 1] = ends[i]
    out[#out + 1] = redis.call('HGET', p .. 'amount:' .. wallet, ends[i])
    out[#out + 1] = ends[i + 1]
  end
end
return out
"""

# ARGV: prefix, then wallet, rfq id, amount, end per reservation, then the totals as wallet,
# total pairs after a '' marker: replaces the whole ledger.
_LOAD = """
local p = ARGV[1]
for _, wallet in ipairs(redis.call('SMEMBERS', p .. 'wallets')) do
  redis.call('DEL', p .. 'amount:' .. wallet, p .. 'ends:' .. wallet)
end
redis.call('DEL', p .. 'total', p .. 'of', p .. 'wallets')
local i = 2
while ARGV[i] ~= '' do
  local wallet, rfq = ARGV[i], ARGV[i + 1]
  redis.call('HSET', p .. 'amount:' .. wallet, rfq, ARGV[i + 2])
  redis.call('ZADD', p .. 'ends:' .. wallet, ARGV[i + 3], rfq)
  redis.call('HSET', p .. 'of', rfq, wallet)
  redis.call('SADD', p .. 'wallets', wallet)
  i = i + 4
end
for j = i + 1, #ARGV, 2 do redis.call('HSET', p .. 'total', ARGV[j], ARGV[j + 1]) end
return 0
"""


def _wallet(wallet: WalletToken) -> str:
    return f"{wallet[0]}|{wallet[1]}|{wallet[2]}"


def _parsed(text: str) -> WalletToken:
    chain, taker, token = text.split("|")
    return int(chain), taker, token


class SharedReservations:
    """The ReservationLedger on the shared engine."""

    def __init__(self, engine: SharedEngine, clock: Clock) -> None:
        self._clock = clock
        self._prefix = engine.prefix + "funds:"
        self._reserve = engine.script(_RESERVE)
        self._committed = engine.script(_COMMITTED)
        self._hold = engine.script(_HOLD)
        self._release = engine.script(_RELEASE)
        self._evict = engine.script(_EVICT)
        self._dump = engine.script(_DUMP)
        self._load = engine.script(_LOAD)
        self._writes = engine.ordered_writes()

    async def reserve(
        self, rfq_id: str, wallet: WalletToken, required: int, until: float, balance: int
    ) -> int | None:
        now = self._clock.time()
        args = [self._prefix, rfq_id, _wallet(wallet), str(required), repr(until)]
        try:
            answer: Any = await self._writes.then(self._reserve, [*args, str(balance), repr(now)])
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return None if answer[0] == 1 else int(answer[1])

    async def committed(self, wallet: WalletToken) -> int:
        try:
            answer: Any = await self._writes.then(
                self._committed, [self._prefix, _wallet(wallet), repr(self._clock.time())]
            )
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return int(answer)

    async def drained(self) -> None:
        """Every hold, release and sweep given so far has reached the engine."""
        await self._writes.drained()

    def hold(self, rfq_id: str, amount: int, until: float) -> None:
        self._writes.put(self._hold, [self._prefix, rfq_id, str(amount), repr(until)])

    def release(self, rfq_id: str) -> None:
        self._writes.put(self._release, [self._prefix, rfq_id])

    def evict_lapsed(self) -> None:
        self._writes.put(self._evict, [self._prefix, repr(self._clock.time())])

    def state(self, name: str) -> StateParticipant:
        return EngineState(name, FundsSaved, self._saved, self._restore)

    def _saved(self) -> FundsSaved:
        self._writes.apply_now()
        flat: Any = self._dump.run_now([self._prefix])
        reservations: dict[str, Reservation] = {}
        totals: dict[WalletToken, int] = {}
        ends: dict[WalletToken, list[tuple[float, str]]] = {}
        # The engine's sets have no order: sorted, so one content always dumps alike.
        rows = sorted(
            (_parsed(flat[i]), flat[i + 1], int(flat[i + 2]), float(flat[i + 3]))
            for i in range(0, len(flat), 4)
        )
        for wallet, rfq_id, amount, until in rows:
            reservations[rfq_id] = Reservation(*wallet, amount, until)
            totals[wallet] = totals.get(wallet, 0) + amount
            ends.setdefault(wallet, []).append((until, rfq_id))
        return FundsSaved(reservations=reservations, totals=totals, ends=ends)

    def _restore(self, saved: FundsSaved) -> None:
        self._writes.apply_now()
        args: list[str | int | float] = [self._prefix]
        totals: dict[WalletToken, int] = {}
        for rfq_id, held in saved.reservations.items():
            wallet = (held.chain_id, held.taker, held.token)
            args += [_wallet(wallet), rfq_id, str(held.amount), repr(held.held_until)]
            totals[wallet] = totals.get(wallet, 0) + held.amount
        args.append("")
        for wallet, total in totals.items():
            args += [_wallet(wallet), str(total)]
        self._load.run_now(args)
