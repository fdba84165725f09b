"""The request journal and the maker stream's frames in the history database
(services/sim/journal_search.py `JournalArchive`): one row per request and per frame, with the
columns the lists filter on indexed together with (at, seq), so `GET /_sim/requests?status=500`
or `GET /_sim/maker-messages?rfq_id=...` over a day is an index range, not a walk.

The rows are built off the request path: a frame's RFQ (services/sim/journal_search.py
`FrameRfqs`, which sees the frames in the order they were recorded) on the database's sender
thread (history_db.py `write_many` with a function), and the costly part, the redaction and the
JSON of bodies, headers and frame texts, in the writer process (history_writer.py `Built`), so
it takes no time of the simulator's process. What was put stays readable from `_pending` until
the writer has committed it."""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from simulator.adapters.store.history_db import HistoryDb
from simulator.adapters.store.history_writer import Built, expand_row
from simulator.services.sim.journal_search import (
    FrameFilter,
    FrameRfqs,
    JournalEntry,
    JournalFilter,
    StreamEntry,
    key_of,
    request_from_stored,
    rfq_of_frames,
    sendable,
    stored_frame,
    stored_request,
)

_PUT_REQUEST = (
    "INSERT OR REPLACE INTO journal_requests (seq, request_id, at, method, path, status, "
    "latency_ms, key_prefix, rest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_PUT_FRAME = (
    "INSERT OR REPLACE INTO journal_frames (seq, at, maker_id, wallet, direction, rfq_id, frame) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_REQUEST_COLUMNS = "seq, request_id, at, method, path, status, latency_ms, key_prefix, rest"
_FRAME_COLUMNS = "seq, at, direction, rfq_id, frame"
RequestRow = tuple[int, str, float, str, str, int, float, str | None, Built]
FrameRow = tuple[int, float, str, str, str, str | None, Built]


def request_row(entry: JournalEntry) -> RequestRow:
    """A request as the file keeps it: secrets out (redacted by the writer process)."""
    rest = Built(stored_request, sendable(entry))
    return (
        entry.seq,
        entry.request_id,
        entry.at,
        entry.method,
        entry.path,
        entry.status,
        entry.latency_ms,
        entry.key_prefix,
        rest,
    )


def time_range(
    lower: float,
    until: float | None,
    before: tuple[float, int] | None,
    after: tuple[float, int] | None,
) -> tuple[list[str], list[Any]]:
    """The clauses bounding a list's walk along an index ending in (at, seq): one `at >= ?`
    (SQLite bounds the walk by one lower bound: the tightest is given), and the cursors as row
    values (spelled `at < ? OR (at = ? AND seq < ?)`, SQLite reads both halves apart and sorts
    everything older)."""
    if after is not None:
        lower = max(lower, after[0])
    clauses, params = ["at >= ?"], [lower]
    if until is not None:
        clauses.append("at < ?")
        params.append(until)
    if before is not None:
        clauses.append("(at, seq) < (?, ?)")
        params += list(before)
    if after is not None:
        clauses.append("(at, seq) > (?, ?)")
        params += list(after)
    return clauses, params


class SqliteJournalArchive:
    def __init__(self, db: HistoryDb) -> None:
        self.db = db
        # (the write that carries it, the entry), oldest first: readable before it is committed
        self._pending: deque[tuple[int, JournalEntry]] = deque()
        self._pending_frames: deque[tuple[int, StreamEntry]] = deque()
        self._rfqs = FrameRfqs()  # used on the sender thread only, frames in recorded order
        self._forgotten_before = float("-inf")  # rows older than this are gone (or going)

    def _prune(self) -> None:
        """Drop what the writer committed: entries are pending in the order of their writes,
        so only the oldest are looked at."""
        committed = self.db.committed
        for pending in (self._pending, self._pending_frames):
            while pending and pending[0][0] <= committed:
                pending.popleft()

    # --- writes ------------------------------------------------------------------------------

    def put_requests(self, entries: list[JournalEntry]) -> None:
        seq = self.db.write_many(_PUT_REQUEST, lambda: [request_row(e) for e in entries])
        self._prune()
        for entry in entries:
            self._pending.append((seq, entry))

    def frame_row(self, entry: StreamEntry) -> FrameRow:
        """A frame as the file keeps it, with its RFQ (worked out on the sender thread, in
        order; the text redacted by the writer process)."""
        return (
            entry.seq,
            entry.at,
            entry.maker_id.lower(),
            entry.wallet.lower(),
            entry.direction,
            self._rfqs.of(entry.text),
            Built(stored_frame, entry),
        )

    def put_frames(self, entries: list[StreamEntry]) -> None:
        seq = self.db.write_many(_PUT_FRAME, lambda: [self.frame_row(e) for e in entries])
        self._prune()
        for entry in entries:
            self._pending_frames.append((seq, entry))

    # --- reads -------------------------------------------------------------------------------

    def requests(self, where: JournalFilter) -> list[JournalEntry]:
        self._prune()
        pending = [e for _, e in self._pending if where.matches(e)]
        clauses, params = time_range(
            max(self._forgotten_before, where.since or self._forgotten_before),
            where.until,
            where.before,
            where.after,
        )
        for column, value in (
            ("request_id", where.request_id),
            ("seq", where.seq),
            ("method", None if where.method is None else where.method.upper()),
            ("status", where.status),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if where.path is not None and where.path.endswith("*"):
            # Walked newest first along (at, seq) (or another filter's index), the prefix
            # tested on each row: a broad prefix (/v2/*) stops at the limit at once.
            clauses.append("substr(path, 1, ?) = ?")
            params += [len(where.path) - 1, where.path[:-1]]
        elif where.path is not None:
            clauses.append("path = ?")
            params.append(where.path)
        if where.below_seq is not None:
            clauses.append("seq < ?")
            params.append(where.below_seq)
        rows = self.db.read(
            f"SELECT {_REQUEST_COLUMNS} FROM journal_requests WHERE {' AND '.join(clauses)} "
            "ORDER BY at DESC, seq DESC LIMIT ?",
            [*params, where.limit + len(pending)],
        )
        held = {e.seq for e in pending}
        found = [self._request(row) for row in rows if row[0] not in held]
        return sorted([*pending, *found], key=key_of, reverse=True)[: where.limit]

    def frames(self, where: FrameFilter) -> list[tuple[StreamEntry, str | None]]:
        self._prune()
        queued = [e for _, e in self._pending_frames]  # in recorded order
        rfqs = rfq_of_frames(queued)  # not built yet: worked out here, as the ring does
        pending = [(e, rfqs.get(e.seq)) for e in queued if where.matches(e, rfqs.get(e.seq))]
        held = {e.seq for e, _ in pending}
        found: dict[int, tuple[StreamEntry, str | None]] = {}
        # By maker: one index range per name and column (a maker id, a wallet), merged here;
        # `IN (a, b)` would sort everything both matched.
        ranges: list[tuple[str | None, str | None]] = [(None, None)]
        if where.makers is not None:
            ranges = [(c, m) for c in ("maker_id", "wallet") for m in sorted(where.makers)]
        for column, maker in ranges:
            for row in self._frame_rows(where, column, maker, where.limit + len(pending)):
                if row[0] not in held:
                    found[row[0]] = self._frame(row)
        merged = [*pending, *found.values()]
        return sorted(merged, key=lambda f: key_of(f[0]), reverse=True)[: where.limit]

    def _frame_rows(
        self, where: FrameFilter, column: str | None, maker: str | None, limit: int
    ) -> list[tuple[Any, ...]]:
        clauses, params = time_range(
            max(self._forgotten_before, where.since or self._forgotten_before),
            where.until,
            where.before,
            None,
        )
        if column is not None:
            clauses.append(f"{column} = ?")  # the column names are ours
            params.append(maker)
        for name, value in (("direction", where.direction), ("rfq_id", where.rfq_id)):
            if value is not None:
                clauses.append(f"{name} = ?")
                params.append(value)
        return self.db.read(
            f"SELECT {_FRAME_COLUMNS} FROM journal_frames WHERE {' AND '.join(clauses)} "
            "ORDER BY at DESC, seq DESC LIMIT ?",
            [*params, limit],
        )

    @staticmethod
    def _request(row: tuple[Any, ...]) -> JournalEntry:
        seq, request_id, at, method, path, status, latency_ms, key_prefix, rest = row
        return request_from_stored(
            seq,
            request_id,
            at,
            method,
            path,
            status,
            latency_ms,
            key_prefix,
            json.loads(expand_row(rest)),
        )

    @staticmethod
    def _frame(row: tuple[Any, ...]) -> tuple[StreamEntry, str | None]:
        seq, at, direction, rfq_id, blob = row
        maker_id, wallet, text = json.loads(expand_row(blob))
        return StreamEntry(seq, at, maker_id, wallet, direction, text), rfq_id

    def last_seq(self) -> int:
        self._prune()
        (requests, frames) = self.db.read(
            "SELECT (SELECT max(seq) FROM journal_requests), (SELECT max(seq) FROM journal_frames)"
        )[0]
        pending = [e.seq for _, e in self._pending] + [e.seq for _, e in self._pending_frames]
        return max([requests or 0, frames or 0, *pending])

    # --- lifetime ----------------------------------------------------------------------------

    def forget_before(self, at: float) -> None:
        self._prune()
        self._pending = deque(p for p in self._pending if p[1].at >= at)
        self._pending_frames = deque(p for p in self._pending_frames if p[1].at >= at)
        self.db.write("DELETE FROM journal_requests WHERE at < ?", (at,))
        self.db.write("DELETE FROM journal_frames WHERE at < ?", (at,))
        self._forgotten_before = max(self._forgotten_before, at)

    def clear(self) -> int:
        """Waits for the writer: no read after a clear may find a row from before it."""
        self.db.flush()
        self._prune()
        (count,) = self.db.read(
            "SELECT count(*) FROM journal_requests WHERE at >= ?", (self._forgotten_before,)
        )[0]
        self._pending, self._pending_frames = deque(), deque()
        self.db.write("DELETE FROM journal_requests")
        self.db.write("DELETE FROM journal_frames")
        self.db.flush()
        return int(count)

    def restored(self) -> None:
        """The file was replaced by a backup (history_db.py `HistoryState`)."""
        self._pending, self._pending_frames = deque(), deque()
        self._forgotten_before = float("-inf")
