"""Idempotency-Key (spec 3 "Endpoints": "Every POST that creates may send header Idempotency-Key
… a retry with the same key replays the first response"), after Stripe's rules and the IETF
idempotency-key draft:

- a key is scoped to the caller (the API key) and the operation (method and path);
- the request that brings a key first claims it the moment its handler is reached; until it
  has answered, the same key is 409 `conflict` (`idempotency_key_in_flight`);
- its answer is kept `ttl_s` on the simulator clock and replayed byte for byte to a retry with
  the same body; another body under the same key is 400 `invalid_request`
  (`idempotency_key_reused`);
- answers that say the request was not carried out are not kept, and the key is free again:
  400 (the spec's validation code, whatever failed: schema, environment, funding), 401, 403,
  413, 429 and 5xx. Everything else (2xx, and 4xx outcomes such as 404 or 409) is kept.

This module holds the state and the rules; the HTTP middleware (api/http/idempotency.py) reads
the header, computes the fingerprint and captures and replays responses."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Annotated, Protocol

from pydantic import Field

from simulator.clock import Clock
from simulator.services.shared.state import (
    AsPairs,
    SavedAttributes,
    StateParticipant,
    StateSchema,
)

# Printable ASCII without leading or trailing blanks, 1 to 255 characters (Stripe's length).
MAX_KEY_LENGTH = 255
# Statuses after which the request counts as not carried out: nothing is stored.
_NOT_STORED = frozenset({400, 401, 403, 413, 429})


@dataclass(frozen=True)
class IdempotencyScope:
    caller: str  # Caller.identity: `key:<key id>` (or `ip:<address>` for a keyless caller)
    method: str
    path: str  # the concrete request path, e.g. /v1/webhooks
    key: str  # the Idempotency-Key header value


@dataclass(frozen=True)
class StoredResponse:
    status: int
    headers: tuple[tuple[str, str], ...]  # what the handler set (Content-Type, ...)
    body: bytes  # exactly the bytes sent the first time
    request_id: str  # the first request's id, which an error body also names


@dataclass
class IdempotencyRecord:
    scope: IdempotencyScope
    created_at: float  # simulator time the first request claimed the key
    fingerprint: str | None = None  # digest of the first request's body; None until read
    response: StoredResponse | None = None  # None while the first request is in flight

    @property
    def in_flight(self) -> bool:
        return self.response is None


def is_valid_key(value: str) -> bool:
    """1 to 255 printable ASCII characters, no leading or trailing space."""
    return (
        0 < len(value) <= MAX_KEY_LENGTH
        and all(0x20 <= ord(ch) <= 0x7E for ch in value)
        and value == value.strip(" ")
    )


def request_fingerprint(query: str, body: bytes) -> str:
    """What makes two requests "the same": the query string and the body, a JSON body compared
    by value (key order and blanks do not matter), anything else byte for byte."""
    try:
        canonical = json.dumps(
            json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=True
        ).encode()
    except (ValueError, UnicodeDecodeError, RecursionError):
        canonical = b"raw:" + body
    return hashlib.sha256(query.encode() + b"\0" + canonical).hexdigest()


def is_stored(status: int) -> bool:
    """Whether a response with this status is kept for replay (see the module docstring)."""
    return status < 500 and status not in _NOT_STORED


class IdempotencyLedger(Protocol):
    """The Idempotency-Key records: in memory for one instance (`IdempotencyStore`), in the
    shared engine for several (adapters/redis/idempotency.py), where a retry may land on
    another instance than the first request. `begin` is the one check-and-claim and is atomic
    wherever the records live: two requests, on one instance or two, never both claim a key."""

    async def begin(self, scope: IdempotencyScope) -> tuple[bool, IdempotencyRecord]:
        """Claim `scope` for the calling request, or return the live record that holds it.

        `(True, record)`: claimed; the caller must `finish` or `release` it. `(False, record)`:
        another request holds it, in flight or finished."""
        ...

    def fingerprinted(self, record: IdempotencyRecord, fingerprint: str) -> None:
        """The claiming request's body was read: what a retry's must match."""
        ...

    async def finish(self, record: IdempotencyRecord, response: StoredResponse) -> None:
        """Keep the first request's answer (a record already expired or evicted stays gone);
        a retry at any instance replays it once this returns."""
        ...

    def release(self, record: IdempotencyRecord) -> None:
        """Forget a claim whose request was not carried out: the key may be used again (a
        no-op once finished)."""
        ...

    async def records(self) -> list[IdempotencyRecord]:
        """Live records, oldest first."""
        ...

    def expires_at(self, record: IdempotencyRecord) -> float: ...

    def state(self, name: str) -> StateParticipant: ...


class IdempotencyStore:
    """The IdempotencyLedger of one instance: every record in memory."""

    def __init__(self, clock: Clock, *, ttl_s: float = 86_400, max_records: int = 100_000) -> None:
        self._clock = clock
        self.ttl_s = ttl_s
        self.max_records = max_records
        # Live records in the order they were claimed, which is also created_at order (the
        # clock only moves forward), so expiry and eviction pop from the front.
        self._records: OrderedDict[IdempotencyScope, IdempotencyRecord] = OrderedDict()

    async def begin(self, scope: IdempotencyScope) -> tuple[bool, IdempotencyRecord]:
        self._expire()  # no await from here on: two parallel requests cannot both claim
        existing = self._records.get(scope)
        if existing is not None:
            return False, existing
        record = IdempotencyRecord(scope=scope, created_at=self._clock.time())
        self._records[scope] = record
        self._evict()
        return True, record

    def fingerprinted(self, record: IdempotencyRecord, fingerprint: str) -> None:
        record.fingerprint = fingerprint

    async def finish(self, record: IdempotencyRecord, response: StoredResponse) -> None:
        if self._records.get(record.scope) is record:
            record.response = response

    def release(self, record: IdempotencyRecord) -> None:
        if self._records.get(record.scope) is record and record.in_flight:
            del self._records[record.scope]

    async def records(self) -> list[IdempotencyRecord]:
        self._expire()
        return list(self._records.values())

    def expires_at(self, record: IdempotencyRecord) -> float:
        return record.created_at + self.ttl_s

    def state(self, name: str) -> StateParticipant:
        return SavedAttributes(name, self, IdempotencySaved)

    def _expire(self) -> None:
        now = self._clock.time()
        while self._records:
            oldest = next(iter(self._records.values()))
            if oldest.created_at + self.ttl_s > now:
                break
            self._records.popitem(last=False)

    def _evict(self) -> None:
        # Oldest finished records go first; a run of in-flight ones at the front is kept (those
        # requests are still being answered), so the cap may be exceeded while they finish.
        while len(self._records) > self.max_records:
            oldest = next(iter(self._records.values()))
            if oldest.in_flight:
                break
            self._records.popitem(last=False)


class IdempotencySaved(StateSchema):
    """What reset and snapshots put back of the Idempotency-Key store: the live records, in
    the order they were claimed."""

    records: Annotated[OrderedDict[IdempotencyScope, IdempotencyRecord], AsPairs()] = Field(
        validation_alias="_records"
    )
