"""The request journal (GET /_sim/requests) and the maker stream's message journal
(GET /_sim/maker-messages): rings of what callers sent and got, as WireMock's
`/__admin/requests`, the hot tier of a lookback over `journal.kept_s` (a day by default) kept
in the history file (services/sim/journal_search.py `JournalArchive`).

Recording is on the hot path of every request, so an entry keeps references to the bytes it was
given and nothing is redacted or decoded there: entries are handed to the archive in batches
(`SAVE_BATCH`, and before every read, every sweep and at stop), whose writer thread builds the
rows, redacted, off the request path. Secrets never leave through the journal: keys keep their
public prefix, claim tokens, signing secrets and signatures are replaced (rfqkit/redaction.py),
and credential headers are not kept at all."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Protocol

from simulator.services.sim.journal_search import (
    BODY_MAX_BYTES,
    SECRET_HEADERS,
    Direction,
    FrameFilter,
    JournalArchive,
    JournalEntry,
    JournalFilter,
    StreamEntry,
    body_view,
    headers_view,
    key_of,
    rfq_of_frames,
)

__all__ = [
    "BODY_MAX_BYTES",
    "SECRET_HEADERS",
    "Direction",
    "FrameFilter",
    "JournalEntry",
    "JournalFilter",
    "JournalRelay",
    "RequestJournal",
    "StreamEntry",
    "body_view",
    "headers_view",
]


class JournalRelay(Protocol):
    """Hands finished requests to the journal of the venue's first instance (several
    instances: adapters/sim/venue_journal.py)."""

    def relay(self, fields: dict[str, Any]) -> None:
        """One finished request (RequestJournal.record's fields); never raises."""
        ...

    async def flush(self) -> None:
        """Every request relayed so far is in the first instance's journal."""
        ...

    async def aclose(self) -> None: ...


# Entries handed to the archive at once: one queued write per this many, not one per request
# (docs/performance.md "Hold a day, issue 33").
SAVE_BATCH = 256


class RequestJournal:
    def __init__(
        self,
        clock_time: Callable[[], float],
        *,
        capacity: int,
        stream_capacity: int,
        changes: Callable[[str, str], None] | None = None,
        archive: JournalArchive | None = None,
    ) -> None:
        self._time = clock_time
        self._changes = changes  # the live feed: told every request recorded
        self.capacity = capacity  # requests kept in memory; older ones: the archive
        self._entries: deque[JournalEntry] = deque(maxlen=capacity)  # oldest first
        self._stream: deque[StreamEntry] = deque(maxlen=stream_capacity)  # oldest first
        self._seq = 0  # last sequence number handed out (requests and frames share it)
        self.archive = archive
        self._unsaved: list[JournalEntry] = []  # recorded, not yet handed to the archive
        self._unsaved_frames: list[StreamEntry] = []
        # Several instances: where each finished request goes instead, to be recorded in the
        # venue's one journal, its first instance's (adapters/sim/venue_journal.py).
        self.relay: JournalRelay | None = None

    def now(self) -> float:
        return self._time()

    def resume(self) -> None:
        """Number on from what the archive keeps (a restart with a state directory)."""
        if self.archive is not None:
            self._seq = max(self._seq, self.archive.last_seq())

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def record(self, **fields: Any) -> None:
        """One finished request (fields of JournalEntry but `seq`)."""
        if self.relay is not None:
            self.relay.relay(fields)
        else:
            self.record_here(**fields)

    def record_here(self, **fields: Any) -> None:
        """One finished request, in this instance's journal."""
        seq = self._next()
        entry = JournalEntry(seq=seq, **fields)
        self._entries.append(entry)
        if self.archive is not None:
            self._unsaved.append(entry)
            if len(self._unsaved) >= SAVE_BATCH:
                self.save()
        if self._changes is not None:
            self._changes("requests", str(seq))

    def by_seq(self, seqs: Iterable[int]) -> list[JournalEntry]:
        """The entries still kept in memory among `seqs`, newest first."""
        wanted = set(seqs)
        return [e for e in reversed(self._entries) if e.seq in wanted]

    def record_frame(self, maker_id: str, wallet: str, direction: Direction, text: str) -> None:
        entry = StreamEntry(self._next(), self._time(), maker_id, wallet, direction, text)
        self._stream.append(entry)
        if self.archive is not None:
            self._unsaved_frames.append(entry)
            if len(self._unsaved_frames) >= SAVE_BATCH:
                self.save()

    def save(self) -> None:
        """Hand what was recorded since the last save to the archive (a reference each: the
        archive's writer thread builds the rows)."""
        if self.archive is None:
            return
        if self._unsaved:
            self.archive.put_requests(self._unsaved)
            self._unsaved = []
        if self._unsaved_frames:
            self.archive.put_frames(self._unsaved_frames)
            self._unsaved_frames = []

    def requests(self, where: JournalFilter) -> list[JournalEntry]:
        """Newest first by (at, seq), at most `where.limit`: memory, then the archive."""
        found: list[JournalEntry] = []
        for entry in reversed(self._entries):
            if where.matches(entry):
                found.append(entry)
                if len(found) >= where.limit:
                    break
        if self.archive is not None:
            self.save()
            # Everything the ring holds is in the archive too: ask only for what is older than
            # the ring, and, once the ring filled the page, only what would outrank its last.
            older = replace(
                where,
                below_seq=self._entries[0].seq if self._entries else None,
                after=key_of(found[-1]) if len(found) >= where.limit else None,
            )
            found += self.archive.requests(older)
            found.sort(key=key_of, reverse=True)
        return found[: where.limit]

    def frames(self, where: FrameFilter) -> list[tuple[StreamEntry, str | None]]:
        """Newest first by (at, seq), each with the RFQ it belongs to (None: levels, pings,
        ...): memory, then the archive (whose rows carry the RFQ worked out when written, so a
        frame whose `rfq` frame left the ring still names it)."""
        rfqs = rfq_of_frames(self._stream)
        found: dict[int, tuple[StreamEntry, str | None]] = {}
        for entry in reversed(self._stream):
            of = rfqs.get(entry.seq)
            if where.matches(entry, of):
                found[entry.seq] = (entry, of)
                if len(found) >= where.limit:
                    break
        if self.archive is not None:
            self.save()
            for entry, of in self.archive.frames(where):
                held = found.get(entry.seq)
                if held is None or (held[1] is None and of is not None):
                    found[entry.seq] = (held[0] if held else entry, of)
        ordered = sorted(found.values(), key=lambda f: key_of(f[0]), reverse=True)
        return ordered[: where.limit]

    def forget_before(self, at: float) -> None:
        """Entries older than `at` are gone, in memory and in the archive (the retention)."""
        for ring in (self._entries, self._stream):
            while ring and ring[0].at < at:
                ring.popleft()
        if self.archive is not None:
            self.save()
            self.archive.forget_before(at)

    def clear(self) -> int:
        """Forget every request and frame, in memory and in the archive; returns how many
        requests went."""
        count = len(self._entries)
        self._entries.clear()
        self._stream.clear()
        if self.archive is not None:
            self.save()
            count = self.archive.clear()
        return count

    def forget(self) -> None:
        self.clear()
