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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rfqkit.redaction import redact

BODY_MAX_BYTES = 16 * 1024  # bodies larger than this are kept as their size only
# Headers never shown, whatever they hold: credentials both ways.
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "cookie", "set-cookie", "proxy-authorization"}
)
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
    # The headers as received and as sent (references; filtered and redacted when read).
    request_headers: Mapping[str, str] | None = None
    response_headers: Mapping[str, str] | None = None


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


def headers_view(headers: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """Headers as the journal shows them: credentials left out, every value redacted."""
    if headers is None:
        return []
    pairs: Iterable[tuple[str, str]] = headers.items()
    return [(name, redact(value)) for name, value in pairs if name.lower() not in SECRET_HEADERS]


class RequestJournal:
    def __init__(
        self,
        clock_time: Callable[[], float],
        *,
        capacity: int,
        stream_capacity: int,
        changes: Callable[[str, str], None] | None = None,
    ) -> None:
        self._time = clock_time
        self._changes = changes  # the live feed: told every request recorded
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
        seq = self._next()
        self._entries.append(JournalEntry(seq=seq, **fields))
        if self._changes is not None:
            self._changes("requests", str(seq))

    def by_seq(self, seqs: Iterable[int]) -> list[JournalEntry]:
        """The entries still kept among `seqs`, newest first."""
        wanted = set(seqs)
        return [e for e in reversed(self._entries) if e.seq in wanted]

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
        self,
        *,
        maker: str | None,
        direction: Direction | None,
        since: float | None,
        limit: int,
        rfq_id: str | None = None,
    ) -> list[tuple[StreamEntry, str | None]]:
        """Newest first, each with the RFQ it belongs to (None: levels, pings, ...); `maker`
        matches the maker id or the wallet (any case)."""
        wanted = maker.lower() if maker else None
        rfqs = self._rfq_of_frames()
        found: list[tuple[StreamEntry, str | None]] = []
        for entry in reversed(self._stream):
            if wanted is not None and wanted not in (entry.maker_id.lower(), entry.wallet.lower()):
                continue
            if direction is not None and entry.direction != direction:
                continue
            if since is not None and entry.at < since:
                continue
            of = rfqs.get(entry.seq)
            if rfq_id is not None and of != rfq_id:
                continue
            found.append((entry, of))
            if len(found) >= limit:
                break
        return found

    def _rfq_of_frames(self) -> dict[int, str]:
        """Which RFQ each frame belongs to, worked out when read (recording stays a reference):
        the venue's frames name `rfqId` and `quoteId`; a maker's `quote` or `decline` names
        only the `quoteId` its `rfq` frame (earlier in the ring) gave. Frames without a
        `quoteId` (levels, pings: most of them) are not parsed."""
        quotes: dict[str, str] = {}  # quote id -> rfq id
        out: dict[int, str] = {}
        for entry in self._stream:
            if '"quoteId"' not in entry.text:
                continue
            try:
                message = json.loads(entry.text)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            quote_id, rfq_id = message.get("quoteId"), message.get("rfqId")
            if not isinstance(quote_id, str):
                continue
            if isinstance(rfq_id, str):
                quotes[quote_id] = rfq_id
            found = quotes.get(quote_id)
            if found is not None:
                out[entry.seq] = found
        return out

    def clear(self) -> int:
        """Forget every request and frame; returns how many requests went."""
        count = len(self._entries)
        self._entries.clear()
        self._stream.clear()
        return count

    def forget(self) -> None:
        self.clear()
