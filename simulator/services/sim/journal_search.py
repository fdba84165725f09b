"""Looking back over the request journal and the maker stream's frames beyond their rings: the
filters and cursor the lists apply, the port of the archive behind the rings
(adapters/store/journal_archive.py keeps every entry in the history file for `journal.kept_s`),
and the forms an entry is kept in there.

Lists are newest first by (at, seq); a cursor is the last item's key, so a page never repeats or
skips an entry while new ones arrive at the head.

What is written to the file is built here, off the request path and out of the simulator's
process: the history file's writer process calls `stored_request` / `stored_frame`
(adapters/store/history_writer.py `Built`), which redact secrets BEFORE a row exists, so no
secret ever reaches the disk; credential headers are dropped before an entry leaves the
simulator (`sendable`). This module is imported there too, so it needs nothing but the
standard library and rfqkit/redaction.py."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from rfqkit.redaction import redact

BODY_MAX_BYTES = 16 * 1024  # bodies larger than this are kept as their size only
# Headers never shown, whatever they hold: credentials both ways.
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "cookie", "set-cookie", "proxy-authorization"}
)
Direction = Literal["in", "out"]  # in: from the maker to the venue; out: to the maker
Key = tuple[float, int]  # (at, seq): the lists' order, newest first
Headers = Mapping[str, str] | Sequence[tuple[str, str]]
QUOTES_REMEMBERED = 100_000  # quote ids whose RFQ the frame writer remembers (oldest go first)


@dataclass
class JournalEntry:
    seq: int  # position in the journal (ids never repeat, even after a clear or a restart)
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
    request_headers: Headers | None = None
    response_headers: Headers | None = None


@dataclass
class StreamEntry:
    seq: int
    at: float
    maker_id: str
    wallet: str
    direction: Direction
    text: str  # the frame as sent (redacted when read)


def key_of(entry: JournalEntry | StreamEntry) -> Key:
    return (entry.at, entry.seq)


@dataclass(frozen=True)
class JournalFilter:
    path: str | None = None  # exact, or a prefix when it ends with *
    method: str | None = None
    status: int | None = None
    since: float | None = None  # simulator time, inclusive
    until: float | None = None  # simulator time, exclusive
    request_id: str | None = None
    seq: int | None = None  # the entry numbered so
    before: Key | None = None  # the cursor: strictly older than this key
    limit: int = 100
    # What the ring already answered (services/sim/journal.py): the archive skips it.
    after: Key | None = None  # strictly newer than this key
    below_seq: int | None = None  # numbered before this

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
            and (self.until is None or entry.at < self.until)
            and (self.request_id is None or entry.request_id == self.request_id)
            and (self.seq is None or entry.seq == self.seq)
            and (self.before is None or key_of(entry) < self.before)
            and (self.after is None or key_of(entry) > self.after)
            and (self.below_seq is None or entry.seq < self.below_seq)
        )


@dataclass(frozen=True)
class FrameFilter:
    makers: frozenset[str] | None = None  # lowercase maker ids / wallets, any of
    direction: Direction | None = None
    since: float | None = None
    until: float | None = None
    rfq_id: str | None = None
    before: Key | None = None
    limit: int = 100

    def matches(self, entry: StreamEntry, rfq_id: str | None) -> bool:
        if self.makers is not None and not {entry.maker_id.lower(), entry.wallet.lower()} & (
            self.makers
        ):
            return False
        return (
            (self.direction is None or entry.direction == self.direction)
            and (self.since is None or entry.at >= self.since)
            and (self.until is None or entry.at < self.until)
            and (self.rfq_id is None or rfq_id == self.rfq_id)
            and (self.before is None or key_of(entry) < self.before)
        )


class FrameRfqs:
    """Which RFQ a frame belongs to, frame after frame in the order they passed: the venue's
    frames name `rfqId` and `quoteId`; a maker's `quote` or `decline` names only the `quoteId`
    its `rfq` frame gave. Frames without a `quoteId` (levels, pings: most of them) are not
    parsed. Remembers the newest QUOTES_REMEMBERED quote ids."""

    def __init__(self) -> None:
        self._quotes: OrderedDict[str, str] = OrderedDict()  # quote id -> rfq id

    def of(self, text: str) -> str | None:
        if '"quoteId"' not in text:
            return None
        try:
            message = json.loads(text)
        except ValueError:
            return None
        if not isinstance(message, dict):
            return None
        quote_id, rfq_id = message.get("quoteId"), message.get("rfqId")
        if not isinstance(quote_id, str):
            return None
        if isinstance(rfq_id, str):
            self._quotes[quote_id] = rfq_id
            if len(self._quotes) > QUOTES_REMEMBERED:
                self._quotes.popitem(last=False)
        return self._quotes.get(quote_id)


def rfq_of_frames(entries: Iterable[StreamEntry]) -> dict[int, str]:
    """Each frame's RFQ (by seq), for frames given oldest first."""
    rfqs = FrameRfqs()
    return {e.seq: rfq for e in entries if (rfq := rfqs.of(e.text)) is not None}


def body_view(body: bytes | None, size: int) -> Any:
    """A body as the journal shows it: JSON when it is JSON, text otherwise, redacted."""
    if body is None:
        return None if size == 0 else {"omitted": True, "size": size}
    text = redact(body.decode("utf-8", errors="replace"))
    try:
        return json.loads(text)
    except ValueError:
        return text


def headers_view(headers: Headers | None) -> list[tuple[str, str]]:
    """Headers as the journal shows them: credentials left out, every value redacted."""
    if headers is None:
        return []
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    kept = [(name, value) for name, value in pairs if name.lower() not in SECRET_HEADERS]
    # One pass of the patterns over every value at once (a header value holds no line break):
    # each pass costs about as much as the text it reads is short (docs/performance.md).
    values = redact("\n".join(value for _, value in kept)).split("\n")
    if len(values) != len(kept):  # a pattern took a line break: value by value instead
        values = [redact(value) for _, value in kept]
    return [(name, value) for (name, _), value in zip(kept, values, strict=True)]


def without_credentials(headers: Headers | None) -> list[tuple[str, str]] | None:
    if headers is None:
        return None
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(name, value) for name, value in pairs if name.lower() not in SECRET_HEADERS]


def sendable(entry: JournalEntry) -> JournalEntry:
    """The entry as it may leave this process for the writer's (pickled): its headers a plain
    list (they are the server's own objects until then) without the credential headers."""
    return replace(
        entry,
        request_headers=without_credentials(entry.request_headers),
        response_headers=without_credentials(entry.response_headers),
    )


def _redacted_body(body: bytes | None) -> str | None:
    return None if body is None else redact(body.decode("utf-8", errors="replace"))


def stored_request(entry: JournalEntry) -> dict[str, Any]:
    """What the file keeps of a request besides its indexed columns, secrets already out."""
    return {
        "query": redact(entry.query) if entry.query else "",
        "request_type": entry.request_type,
        "request_body": _redacted_body(entry.request_body),
        "request_size": entry.request_size,
        "request_headers": headers_view(entry.request_headers),
        "response_body": _redacted_body(entry.response_body),
        "response_size": entry.response_size,
        "response_headers": headers_view(entry.response_headers),
    }


def request_from_stored(
    seq: int,
    request_id: str,
    at: float,
    method: str,
    path: str,
    status: int,
    latency_ms: float,
    key_prefix: str | None,
    rest: dict[str, Any],
) -> JournalEntry:
    def body(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    return JournalEntry(
        seq=seq,
        request_id=request_id,
        at=at,
        method=method,
        path=path,
        query=rest["query"],
        status=status,
        latency_ms=latency_ms,
        key_prefix=key_prefix,
        request_type=rest["request_type"],
        request_body=body(rest["request_body"]),
        request_size=rest["request_size"],
        response_body=body(rest["response_body"]),
        response_size=rest["response_size"],
        request_headers=[(str(n), str(v)) for n, v in rest["request_headers"]],
        response_headers=[(str(n), str(v)) for n, v in rest["response_headers"]],
    )


def stored_frame(entry: StreamEntry) -> list[str]:
    """What the file keeps of a frame besides its indexed columns: the names as given and the
    text, redacted."""
    return [entry.maker_id, entry.wallet, redact(entry.text)]


def merged(
    first: Iterable[tuple[int, Any]], second: Iterable[tuple[int, Any]]
) -> Iterator[tuple[int, Any]]:
    """`first`'s items, then `second`'s whose seq `first` did not have."""
    seen: set[int] = set()
    for seq, item in [*first, *second]:
        if seq not in seen:
            seen.add(seq)
            yield seq, item


class JournalArchive(Protocol):
    """Where every request and frame goes (in batches), searched by index: the journal's rings
    hold only the newest. `put_*` must only read the entries (the caller no longer changes
    them); what was put is found by the searches at once."""

    def put_requests(self, entries: list[JournalEntry]) -> None: ...

    def put_frames(self, entries: list[StreamEntry]) -> None: ...

    def requests(self, where: JournalFilter) -> list[JournalEntry]:
        """The newest `where.limit` matches, newest first."""
        ...

    def frames(self, where: FrameFilter) -> list[tuple[StreamEntry, str | None]]:
        """The newest `where.limit` matches, newest first, each with its RFQ."""
        ...

    def last_seq(self) -> int:
        """The highest seq kept (0: none): numbering resumes after it across restarts."""
        ...

    def forget_before(self, at: float) -> None: ...

    def clear(self) -> int:
        """Forget every request and frame (once gone, no read finds them); returns how many
        requests went."""
        ...
