"""Proof-of-control nonces and grants in the shared engine: the `ProofLedger` of several
instances, with the rules of services/access/proofs.py and the contract of its in-memory
ledger (tests/integration/shared_engine/test_proof_ledger_contract.py runs both).

Keys, under the engine's prefix plus `proofs:`:
  nonce        hash: nonce (hex) -> its binding as JSON (contents and caller)
  issued       sorted set: nonce (hex) -> the bound proof's issuedAt (freshness, eviction)
  grant        hash: `<taker>|<chain>|<caller>` -> the grant's end
  grant-ends   sorted set: the same fields -> the grant's end (eviction)

Binding is one script that judges the binding already there by the fresh window it is given
(the service's clocks are the instance's, never the engine's), so a proof replayed at another
instance meets its binding there."""

from __future__ import annotations

import json
import math
from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, EngineState, SharedEngine, unreachable
from simulator.services.access.proofs import (
    FreshWindow,
    GrantKey,
    NonceUse,
    ProofsSaved,
)
from simulator.services.shared.state import StateParticipant

# ARGV: prefix, nonce, binding JSON, its issuedAt, then low, high per fresh range
# -> the binding there when fresh (nothing written), else false once bound
_BIND = """
local p, nonce = ARGV[1], ARGV[2]
local there = redis.call('HGET', p .. 'nonce', nonce)
if there then
  local issued = tonumber(redis.call('ZSCORE', p .. 'issued', nonce))
  for i = 5, #ARGV, 2 do
    if issued and issued >= tonumber(ARGV[i]) and issued <= tonumber(ARGV[i + 1]) then
      return there
    end
  end
end
redis.call('HSET', p .. 'nonce', nonce, ARGV[3])
redis.call('ZADD', p .. 'issued', ARGV[4], nonce)
return false
"""

# ARGV: prefix, grant field, end
_GRANT = """
redis.call('HSET', ARGV[1] .. 'grant', ARGV[2], ARGV[3])
redis.call('ZADD', ARGV[1] .. 'grant-ends', ARGV[3], ARGV[2])
return 0
"""

# ARGV: prefix, now, then min, max (ZRANGEBYSCORE bounds) of each stale issuedAt interval
_EVICT = """
local p = ARGV[1]
for _, field in ipairs(redis.call('ZRANGEBYSCORE', p .. 'grant-ends', '-inf', ARGV[2])) do
  redis.call('HDEL', p .. 'grant', field)
end
redis.call('ZREMRANGEBYSCORE', p .. 'grant-ends', '-inf', ARGV[2])
for i = 3, #ARGV, 2 do
  for _, nonce in ipairs(redis.call('ZRANGEBYSCORE', p .. 'issued', ARGV[i], ARGV[i + 1])) do
    redis.call('HDEL', p .. 'nonce', nonce)
  end
  redis.call('ZREMRANGEBYSCORE', p .. 'issued', ARGV[i], ARGV[i + 1])
end
return 0
"""

# ARGV: prefix -> {nonce, binding, ...}, {grant field, end, ...}
_DUMP = """
local p = ARGV[1]
return {redis.call('HGETALL', p .. 'nonce'), redis.call('HGETALL', p .. 'grant')}
"""

# ARGV: prefix, then nonce, binding JSON, issuedAt per binding, '', then field, end per grant
_LOAD = """
local p = ARGV[1]
redis.call('DEL', p .. 'nonce', p .. 'issued', p .. 'grant', p .. 'grant-ends')
local i = 2
while ARGV[i] ~= '' do
  redis.call('HSET', p .. 'nonce', ARGV[i], ARGV[i + 1])
  redis.call('ZADD', p .. 'issued', ARGV[i + 2], ARGV[i])
  i = i + 3
end
for j = i + 1, #ARGV, 2 do
  redis.call('HSET', p .. 'grant', ARGV[j], ARGV[j + 1])
  redis.call('ZADD', p .. 'grant-ends', ARGV[j + 1], ARGV[j])
end
return 0
"""


def _binding(use: NonceUse) -> str:
    taker, chain_id, issued_ms, signature = use.contents
    return json.dumps([taker, chain_id, issued_ms, signature.hex(), use.caller])


def _use(text: str) -> NonceUse:
    taker, chain_id, issued_ms, signature, caller = json.loads(text)
    return NonceUse((taker, chain_id, issued_ms, bytes.fromhex(signature)), caller)


def _field(key: GrantKey) -> str:
    return f"{key[0]}|{key[1]}|{key[2]}"


def _key(field: str) -> GrantKey:
    taker, chain_id, caller = field.split("|", 2)
    return taker, int(chain_id), caller


def stale_intervals(fresh: FreshWindow) -> list[str]:
    """ZRANGEBYSCORE bounds (min, max, …) of every issuedAt no range of `fresh` holds."""
    bounds: list[str] = []
    edge, covered = "-inf", -math.inf  # the next stale interval starts past `covered`
    for low, high in sorted(fresh.ranges):
        if low > covered:
            bounds += [edge, f"({low!r}"]
        if high > covered:
            edge, covered = f"({high!r}", high
    return [*bounds, edge, "+inf"]


class SharedProofs:
    """The ProofLedger on the shared engine."""

    def __init__(self, engine: SharedEngine) -> None:
        self._engine = engine
        self._prefix = engine.prefix + "proofs:"
        self._bind = engine.script(_BIND)
        self._grant = engine.script(_GRANT)
        self._evict = engine.script(_EVICT)
        self._dump = engine.script(_DUMP)
        self._load = engine.script(_LOAD)
        self._writes = engine.ordered_writes()

    async def bound(self, nonce: bytes) -> NonceUse | None:
        try:
            text: Any = await self._engine.client.hget(self._prefix + "nonce", nonce.hex())
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return None if text is None else _use(text)

    async def bind(self, nonce: bytes, use: NonceUse, fresh: FreshWindow) -> NonceUse | None:
        args: list[str | int | float] = [
            self._prefix,
            nonce.hex(),
            _binding(use),
            repr(use.issued_at),
        ]
        for low, high in fresh.ranges:
            args += [repr(low), repr(high)]
        try:
            there: Any = await self._writes.then(self._bind, args)
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return None if there is None else _use(there)

    async def grant_until(self, key: GrantKey) -> float | None:
        try:
            await self._writes.drained()
            end: Any = await self._engine.client.hget(self._prefix + "grant", _field(key))
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return None if end is None else float(end)

    async def drained(self) -> None:
        """Every grant and sweep given so far has reached the engine."""
        await self._writes.drained()

    def grant(self, key: GrantKey, until: float) -> None:
        self._writes.put(self._grant, [self._prefix, _field(key), repr(until)])

    def evict(self, fresh: FreshWindow, now: float) -> None:
        self._writes.put(self._evict, [self._prefix, repr(now), *stale_intervals(fresh)])

    def state(self, name: str) -> StateParticipant:
        return EngineState(name, ProofsSaved, self._saved, self._restore)

    def _saved(self) -> ProofsSaved:
        self._writes.apply_now()
        dumped: Any = self._dump.run_now([self._prefix])
        nonces, grants = dumped
        return ProofsSaved(
            nonces={
                bytes.fromhex(nonces[i]): _use(nonces[i + 1])
                for i in sorted(range(0, len(nonces), 2), key=lambda i: nonces[i])
            },
            grants={
                _key(grants[i]): float(grants[i + 1])
                for i in sorted(range(0, len(grants), 2), key=lambda i: grants[i])
            },
        )

    def _restore(self, saved: ProofsSaved) -> None:
        self._writes.apply_now()
        args: list[str | int | float] = [self._prefix]
        for nonce, use in saved.nonces.items():
            args += [nonce.hex(), _binding(use), repr(use.issued_at)]
        args.append("")
        for key, until in saved.grants.items():
            args += [_field(key), repr(until) if math.isfinite(until) else "+inf"]
        self._load.run_now(args)
