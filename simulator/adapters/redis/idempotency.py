"""Idempotency-Key records in the shared engine: the `IdempotencyLedger` of several instances,
with the rules of services/shared/idempotency.py and the contract of its in-memory store
(tests/integration/shared_engine/test_idempotency_ledger_contract.py runs both).

Keys, under the engine's prefix plus `idem:`:
  rec:<scope>   hash: created (the claim's time, exact: it tells this claim from a later one
                of the same scope), fingerprint, and once finished status, headers, body
                (base64), request_id
  created       sorted set: scope -> created (expiry after the TTL, eviction of the oldest)

<scope> is the JSON array [caller, method, path, key]. Claiming is one script (expire, look,
claim, evict), so two instances never both claim a key; a finished answer is written before
the response leaves, so a retry at any instance replays it."""

from __future__ import annotations

import base64
import json
from collections import OrderedDict
from typing import Any

from simulator.adapters.redis.engine import UNREACHABLE, EngineState, SharedEngine, unreachable
from simulator.clock import Clock
from simulator.services.shared.idempotency import (
    IdempotencyRecord,
    IdempotencySaved,
    IdempotencyScope,
    StoredResponse,
)
from simulator.services.shared.state import StateParticipant

_EXPIRE = """
local function expire(p, cutoff)
  for _, scope in ipairs(redis.call('ZRANGEBYSCORE', p .. 'created', '-inf', cutoff)) do
    redis.call('DEL', p .. 'rec:' .. scope)
  end
  redis.call('ZREMRANGEBYSCORE', p .. 'created', '-inf', cutoff)
end
"""

# ARGV: prefix, scope, now (exact), expiry cutoff (now - TTL), max records
# -> {1} claimed, or {0, the record's fields as HGETALL gives them}
_BEGIN = (
    _EXPIRE
    + """
local p, scope = ARGV[1], ARGV[2]
expire(p, ARGV[4])
local there = redis.call('HGETALL', p .. 'rec:' .. scope)
if #there > 0 then return {0, there} end
redis.call('HSET', p .. 'rec:' .. scope, 'created', ARGV[3])
redis.call('ZADD', p .. 'created', ARGV[3], scope)
while redis.call('ZCARD', p .. 'created') > tonumber(ARGV[5]) do
  local oldest = redis.call('ZRANGE', p .. 'created', 0, 0)[1]
  if redis.call('HEXISTS', p .. 'rec:' .. oldest, 'status') == 0 then break end
  redis.call('DEL', p .. 'rec:' .. oldest)
  redis.call('ZREM', p .. 'created', oldest)
end
return {1}
"""
)

# ARGV: prefix, scope, created, then field, value pairs: written only to that same claim
_UPDATE = """
local record = ARGV[1] .. 'rec:' .. ARGV[2]
if redis.call('HGET', record, 'created') ~= ARGV[3] then return 0 end
if redis.call('HEXISTS', record, 'status') == 1 then return 0 end
for i = 4, #ARGV, 2 do redis.call('HSET', record, ARGV[i], ARGV[i + 1]) end
return 1
"""

# ARGV: prefix, scope, created: forget that claim while in flight
_RELEASE = """
local record = ARGV[1] .. 'rec:' .. ARGV[2]
if redis.call('HGET', record, 'created') ~= ARGV[3] then return 0 end
if redis.call('HEXISTS', record, 'status') == 1 then return 0 end
redis.call('DEL', record)
redis.call('ZREM', ARGV[1] .. 'created', ARGV[2])
return 1
"""

# ARGV: prefix, expiry cutoff -> scope, fields, ... oldest first
_RECORDS = (
    _EXPIRE
    + """
local p, out = ARGV[1], {}
expire(p, ARGV[2])
for _, scope in ipairs(redis.call('ZRANGE', p .. 'created', 0, -1)) do
  out[#out + 1] = scope
  out[#out + 1] = redis.call('HGETALL', p .. 'rec:' .. scope)
end
return out
"""
)

# ARGV: prefix, then scope, field count, fields... per record: replaces every record.
_LOAD = """
local p = ARGV[1]
for _, scope in ipairs(redis.call('ZRANGE', p .. 'created', 0, -1)) do
  redis.call('DEL', p .. 'rec:' .. scope)
end
redis.call('DEL', p .. 'created')
local i = 2
while i <= #ARGV do
  local scope, count = ARGV[i], tonumber(ARGV[i + 1])
  for j = i + 2, i + 1 + count, 2 do
    redis.call('HSET', p .. 'rec:' .. scope, ARGV[j], ARGV[j + 1])
    if ARGV[j] == 'created' then redis.call('ZADD', p .. 'created', ARGV[j + 1], scope) end
  end
  i = i + 2 + count
end
return 0
"""


def _scope_field(scope: IdempotencyScope) -> str:
    return json.dumps([scope.caller, scope.method, scope.path, scope.key])


def _scope(field: str) -> IdempotencyScope:
    caller, method, path, key = json.loads(field)
    return IdempotencyScope(caller=caller, method=method, path=path, key=key)


def _response_fields(response: StoredResponse) -> list[str]:
    return [
        "status", str(response.status),
        "headers", json.dumps(response.headers),
        "body", base64.b64encode(response.body).decode(),
        "request_id", response.request_id,
    ]  # fmt: skip


def _record(scope: IdempotencyScope, flat: list[str]) -> IdempotencyRecord:
    fields = dict(zip(flat[::2], flat[1::2], strict=True))
    response = None
    if "status" in fields:
        response = StoredResponse(
            status=int(fields["status"]),
            headers=tuple((name, value) for name, value in json.loads(fields["headers"])),
            body=base64.b64decode(fields["body"]),
            request_id=fields["request_id"],
        )
    return IdempotencyRecord(
        scope=scope,
        created_at=float(fields["created"]),
        fingerprint=fields.get("fingerprint"),
        response=response,
    )


def _fields(record: IdempotencyRecord) -> list[str]:
    fields = ["created", repr(record.created_at)]
    if record.fingerprint is not None:
        fields += ["fingerprint", record.fingerprint]
    if record.response is not None:
        fields += _response_fields(record.response)
    return fields


class SharedIdempotency:
    """The IdempotencyLedger on the shared engine."""

    def __init__(
        self,
        engine: SharedEngine,
        clock: Clock,
        *,
        ttl_s: float = 86_400,
        max_records: int = 100_000,
    ) -> None:
        self._clock = clock
        self.ttl_s = ttl_s
        self.max_records = max_records
        self._prefix = engine.prefix + "idem:"
        self._begin = engine.script(_BEGIN)
        self._update = engine.script(_UPDATE)
        self._release = engine.script(_RELEASE)
        self._records = engine.script(_RECORDS)
        self._load = engine.script(_LOAD)
        self._writes = engine.ordered_writes()

    async def begin(self, scope: IdempotencyScope) -> tuple[bool, IdempotencyRecord]:
        now = self._clock.time()
        args = [self._prefix, _scope_field(scope), repr(now), repr(now - self.ttl_s)]
        try:
            answer: Any = await self._writes.then(self._begin, [*args, self.max_records])
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        if answer[0] == 1:
            return True, IdempotencyRecord(scope=scope, created_at=now)
        return False, _record(scope, answer[1])

    def fingerprinted(self, record: IdempotencyRecord, fingerprint: str) -> None:
        record.fingerprint = fingerprint
        self._writes.put(self._update, [*self._claim(record), "fingerprint", fingerprint])

    async def finish(self, record: IdempotencyRecord, response: StoredResponse) -> None:
        try:
            written = await self._writes.then(
                self._update, [*self._claim(record), *_response_fields(response)]
            )
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        if written == 1:
            record.response = response

    def release(self, record: IdempotencyRecord) -> None:
        if record.in_flight:
            self._writes.put(self._release, self._claim(record))

    async def records(self) -> list[IdempotencyRecord]:
        try:
            flat: Any = await self._writes.then(
                self._records, [self._prefix, repr(self._clock.time() - self.ttl_s)]
            )
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc
        return [_record(_scope(flat[i]), flat[i + 1]) for i in range(0, len(flat), 2)]

    def expires_at(self, record: IdempotencyRecord) -> float:
        return record.created_at + self.ttl_s

    async def drained(self) -> None:
        """Every fingerprint and release given so far has reached the engine."""
        await self._writes.drained()

    def state(self, name: str) -> StateParticipant:
        return EngineState(name, IdempotencySaved, self._saved, self._restore)

    def _claim(self, record: IdempotencyRecord) -> list[str]:
        return [self._prefix, _scope_field(record.scope), repr(record.created_at)]

    def _saved(self) -> IdempotencySaved:
        self._writes.apply_now()
        flat: Any = self._records.run_now([self._prefix, repr(self._clock.time() - self.ttl_s)])
        records = [_record(_scope(flat[i]), flat[i + 1]) for i in range(0, len(flat), 2)]
        return IdempotencySaved(records=OrderedDict((record.scope, record) for record in records))

    def _restore(self, saved: IdempotencySaved) -> None:
        self._writes.apply_now()
        args: list[str | int | float] = [self._prefix]
        for record in saved.records.values():
            fields = _fields(record)
            args += [_scope_field(record.scope), len(fields), *fields]
        self._load.run_now(args)
