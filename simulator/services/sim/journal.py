"""The request journal (GET /_sim/requests) and the maker stream's message journal
(GET /_sim/maker-messages): bounded rings of what callers sent and got, as WireMock's
`/__admin/requests`.

Recording is on the hot path of every request, so an entry keeps references to the bytes it was
given and nothing is redacted or decoded there; `redact` runs when an entry is read. Secrets
never leave through the journal: keys keep their public prefix, claim tokens, signing secrets
and signatures are replaced (rfqkit/redaction.py), and credential headers are not kept at all."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from rfqkit.redaction import redact

BODY_MAX_BYTES = 16 * 1024  # bodies larger than this are kept as their size only
Direction = Literal["in", "out"]  # in: from the maker to the venue; out: to the maker


@dataclass
class JournalEntry:
    seq: int  # position in the journal since start (ids never repeat, even after a clear)
    request_id: str
    at: float  # simulator time the request arrived
    method: str
    path: str
    query: str  # the raw query string
    status: int
    latency_ms: float
    key_prefix: str | None  # the API key's public prefix, when one was sent
    request_type: str | None  # content type of the request body
    request_body: bytes | None
    request_size: int
    response_body: bytes | None
    response_size: int


@dataclass
class StreamEntry:
    seq: int
    at: float
    maker_id: str
    wallet: str
    direction: Direction
    text: str  # the frame as sent (redacted when read)


@dataclass(frozen=True)
class JournalFilter:
    path: str | None = None  # exact, or a prefix when it ends with *
    method: str | None = None
    status: int | None = None
    since: float | None = None  # simulator time, inclusive
    request_id: str | None = None
    limit: int = 100

    def matches(self, entry: JournalEntry) -> bool:
        if self.path is not None:
            if self.path.endswith("*"):
                if not entry.path.startswith(self.path[:-1]):
                    return False
            elif entry.path != self.path:
                return False
        return (
            (self.method is None or entry.method == self.method.upper())
            and (self.status is None or entry.status == self.status)
            and (self.since is None or entry.at >= self.since)
            and (self.request_id is None or entry.request_id == self.request_id)
        )


def body_view(body: bytes | None, size: int) -> Any:
    """A body as the journal shows it: JSON when it is JSON, text otherwise, redacted."""
    if body is None:
        return None if size == 0 else {"omitted": True, "size": size}
    text = redact(body.decode("utf-8", errors="replace"))
    try:
        return json.loads(text)
    except ValueError:
        return text


class RequestJournal:
    def __init__(
        self, clock_time: Callable[[], float], *, capacity: int, stream_capacity: int
    ) -> None:
        self._time = clock_time
        self.capacity = capacity  # requests kept; older ones drop off
        self._entries: deque[JournalEntry] = deque(maxlen=capacity)  # oldest first
        self._stream: deque[StreamEntry] = deque(maxlen=stream_capacity)  # oldest first
        self._seq = 0  # last sequence number handed out (requests and frames share it)

    def now(self) -> float:
        return self._time()

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def record(self, **fields: Any) -> None:
        """One finished request (fields of JournalEntry but `seq`)."""
        self._entries.append(JournalEntry(seq=self._next(), **fields))

    def record_frame(self, maker_id: str, wallet: str, direction: Direction, text: str) -> None:
        entry = StreamEntry(self._next(), self._time(), maker_id, wallet, direction, text)
        self._stream.append(entry)

    def requests(self, where: JournalFilter) -> list[JournalEntry]:
        """Newest first, at most `where.limit`."""
        found: list[JournalEntry] = []
        for entry in reversed(self._entries):
            if where.matches(entry):
                found.append(entry)
                if len(found) >= where.limit:
                    break
        return found

    def frames(
        self, *, maker: str | None, direction: Direction | None, since: float | None, limit: int
    ) -> list[StreamEntry]:
        """Newest first; `maker` matches the maker id or the wallet (any case)."""
        wanted = maker.lower() if maker else None
        found: list[StreamEntry] = []
        for entry in reversed(self._stream):
            if wanted is not None and wanted not in (entry.maker_id.lower(), entry.wallet.lower()):
                continue
            if direction is not None and entry.direction != direction:
                continue
            if since is not None and entry.at < since:
                continue
            found.append(entry)
            if len(found) >= limit:
                break
        return found

    def clear(self) -> int:
        """Forget every request and frame; returns how many requests went."""
        count = len(self._entries)
        self._entries.clear()
        self._stream.clear()
        return count

    def forget(self) -> None:
        self.clear()
