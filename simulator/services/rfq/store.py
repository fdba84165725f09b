"""The RFQ store: every RFQ record, the order-hash index fills find them by and the Fill logs seen
per RFQ (the reactors' trade history is the rates feed's tape, services/feed/store.py), behind
the `RfqStore` port (ports.py), shared by RfqService and Settlement (one store per area, so reset
and snapshots work store by store).

Two tiers. In memory: every live record (soliciting, quoted, submitted) and every record at rest
for less than `hot_s`, with the sweep's index. In the archive (the `RfqArchive` port: the history
database, adapters/store/rfq_archive.py): the records at rest longer, with their fills and order
hashes, until the correction window and the retention have passed; the archive forgets them by
a query on their at-rest time, not by a walk over them. A record read from the archive (a late
fill, a GET of an old RFQ) comes back into memory, so a caller that changes it changes the one
copy, and goes back at a later sweep (`spill`) with its changes.

Nothing here awaits, so every method is atomic on the event loop. The read-modify-writes that span
an await are the callers': settlement re-checks a record's status after its receipt read, and the
taker-funds reservation keeps its own lock (funds.py)."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from simulator.services.rfq.archived import ArchivedRfq, copy_of
from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.ports import RfqArchive
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import StateSchema


@dataclass
class TieredRfqStore:
    archive: RfqArchive  # the records at rest, out of memory
    records: dict[str, StoredRfq] = field(default_factory=dict)  # every RFQ by id, oldest first
    by_order: dict[bytes, str] = field(default_factory=dict)  # quoted order hash -> rfq id
    fills: dict[str, dict[bytes, Fill]] = field(
        default_factory=dict
    )  # rfq id -> its Fill logs seen so far, by order hash (a bundle settles once all are in)
    # What settlement's sweep reads, so a wake costs the RFQs time changes now, not every live
    # quote nor every record kept for the correction window. Derived from `records` (rebuilt
    # after a load), pruned lazily: quoted RFQs in a heap by expiresAt, submitted ones in a heap
    # by order deadline, and the submitted ones past their deadline that a sweep could not
    # decide yet (looked at again by every sweep).
    _expiring: list[tuple[float, str]] = field(default_factory=list, repr=False)
    _deadlines: list[tuple[float, str]] = field(default_factory=list, repr=False)
    _overdue: dict[str, None] = field(default_factory=dict, repr=False)
    # Records read back from the archive since the last spill: kept in memory at least until
    # the next one, so a caller holding one across an await still changes the copy kept.
    _recalled: dict[str, None] = field(default_factory=dict, repr=False)
    # What the spill and the eviction read, so a sweep costs the records due, not a walk over
    # every record in memory: (the earliest time the record can have come to rest, id),
    # earliest first. An entry is looked at once that time is before a sweep's horizon (which
    # is never later than now): a record at rest since before it leaves, any other goes back
    # with its rest time, or, still live, with the horizon (it comes to rest after now).
    _resting: list[tuple[float, str]] = field(default_factory=list, repr=False)

    def add(self, record: StoredRfq) -> None:
        self.records[record.rfq_id] = record
        heapq.heappush(self._resting, (record.created_at, record.rfq_id))

    def get(self, rfq_id: str) -> StoredRfq | None:
        record = self.records.get(rfq_id)
        return record if record is not None else self._recall(rfq_id)

    def _recall(self, rfq_id: str) -> StoredRfq | None:
        archived = self.archive.get(rfq_id)
        if archived is None:
            return None
        self._recalled[rfq_id] = None
        return self._take(archived)

    def _take(self, archived: ArchivedRfq) -> StoredRfq:
        """A record from elsewhere (the archive, another instance) into memory, indexed."""
        record = archived.record
        rfq_id = record.rfq_id
        self.records[rfq_id] = record
        if archived.fills:
            self.fills[rfq_id] = dict(archived.fills)
        if record.quote is not None:
            for order in record.quote.orders:
                self.by_order[order.order_hash] = rfq_id
        heapq.heappush(self._resting, (record.at_rest_since() or record.created_at, rfq_id))
        return record

    def adopt(self, archived: ArchivedRfq) -> StoredRfq:
        """A record another instance of the venue held, taken over: kept and swept here as
        one made here."""
        record = self._take(archived)
        if record.quote is not None and record.status == "quoted":
            heapq.heappush(self._expiring, (record.quote.expires_at, record.rfq_id))
        elif record.quote is not None and record.status == "submitted":
            heapq.heappush(self._deadlines, (record.quote.order_deadline, record.rfq_id))
        return record

    def copy(self, record: StoredRfq) -> Callable[[], bytes]:
        """The record and its fills as kept for another instance (made only when asked)."""
        return lambda: copy_of(record, self.fills.get(record.rfq_id, {}))

    def discard(self, rfq_id: str) -> None:
        self.records.pop(rfq_id, None)

    def all(self) -> list[StoredRfq]:
        kept = [a.record for a in self.archive.all() if a.record.rfq_id not in self.records]
        return sorted([*kept, *self.records.values()], key=lambda r: r.created_at)

    def in_memory(self) -> int:
        return len(self.records)

    def spill(self, before: float) -> int:
        """Hand every record at rest since before `before` to the archive (with its fills and
        order hashes) and drop it from memory; one read back since the last spill waits for the
        next. Returns how many went."""
        going: list[ArchivedRfq] = []
        for record, since in self._at_rest_before(before):
            if record.rfq_id in self._recalled:
                heapq.heappush(self._resting, (since, record.rfq_id))  # looked at next time
                continue
            fills = self.fills.get(record.rfq_id, {})
            going.append(ArchivedRfq.model_construct(record=record, fills=fills))  # checked types
        self._recalled.clear()
        if going:
            self.archive.put(going)
            for archived in going:
                self._drop(archived.record)
        return len(going)

    def _at_rest_before(self, before: float) -> list[tuple[StoredRfq, float]]:
        """The records in memory at rest since before `before`, with that time, taken off the
        rest index (the caller drops each or puts it back); the others looked at go back."""
        due: list[tuple[StoredRfq, float]] = []
        again: list[tuple[float, str]] = []
        seen: set[str] = set()  # an id can have two entries (an old one, and one of a recall)
        resting = self._resting
        while resting and resting[0][0] < before:
            _, rfq_id = heapq.heappop(resting)
            record = self.records.get(rfq_id)
            if record is None or rfq_id in seen:
                continue  # dropped, forgotten or discarded since, or looked at in this pass
            seen.add(rfq_id)
            since = record.at_rest_since()
            if since is None:
                again.append((before, rfq_id))
            elif since < before:
                due.append((record, since))
            else:
                again.append((since, rfq_id))
        for entry in again:
            heapq.heappush(resting, entry)
        return due

    def _drop(self, record: StoredRfq) -> None:
        del self.records[record.rfq_id]
        self.fills.pop(record.rfq_id, None)
        if record.quote is not None:
            for order in record.quote.orders:
                if self.by_order.get(order.order_hash) == record.rfq_id:
                    del self.by_order[order.order_hash]

    def index_orders(self, record: StoredRfq) -> None:
        assert record.quote is not None, "only a quoted RFQ has orders"
        for order in record.quote.orders:
            self.by_order[order.order_hash] = record.rfq_id
        heapq.heappush(self._expiring, (record.quote.expires_at, record.rfq_id))

    def track_submitted(self, record: StoredRfq) -> None:
        assert record.quote is not None, "only a quoted RFQ is submitted"
        heapq.heappush(self._deadlines, (record.quote.order_deadline, record.rfq_id))

    def _status(self, rfq_id: str) -> str | None:
        record = self.records.get(rfq_id)
        return record.status if record is not None else None

    def _head(self, heap: list[tuple[float, str]], status: str) -> float | None:
        """The first moment in `heap` whose RFQ still has `status` (the others are dropped)."""
        while heap and self._status(heap[0][1]) != status:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def expiring(self, until: float) -> list[StoredRfq]:
        due: list[StoredRfq] = []
        while (moment := self._head(self._expiring, "quoted")) is not None and moment <= until:
            due.append(self.records[heapq.heappop(self._expiring)[1]])
        return due

    def overdue(self, now: float) -> list[StoredRfq]:
        while (moment := self._head(self._deadlines, "submitted")) is not None and moment < now:
            self._overdue[heapq.heappop(self._deadlines)[1]] = None
        for rfq_id in [i for i in self._overdue if self._status(i) != "submitted"]:
            del self._overdue[rfq_id]  # settled or forgotten
        return [self.records[i] for i in self._overdue]

    def next_expiry(self) -> float | None:
        return self._head(self._expiring, "quoted")

    def next_deadline(self) -> float | None:
        return self._head(self._deadlines, "submitted")

    def reindex_open(self) -> None:
        """Rebuild the sweep's index from the records (a reset or a restore replaced them)."""
        quoted = (r for r in self.records.values() if r.quote is not None)
        self._expiring, self._deadlines, self._overdue = [], [], {}
        for record in quoted:
            assert record.quote is not None
            if record.status == "quoted":
                self._expiring.append((record.quote.expires_at, record.rfq_id))
            elif record.status == "submitted":
                self._deadlines.append((record.quote.order_deadline, record.rfq_id))
        heapq.heapify(self._expiring)
        heapq.heapify(self._deadlines)
        self._resting = [(r.at_rest_since() or r.created_at, i) for i, r in self.records.items()]
        heapq.heapify(self._resting)

    def by_order_hash(self, order_hash: bytes) -> StoredRfq | None:
        rfq_id = self.by_order.get(order_hash)
        if rfq_id is None:
            rfq_id = self.archive.rfq_of_order(order_hash)
        return self.get(rfq_id) if rfq_id is not None else None

    def evict_at_rest(self, before: float) -> int:
        """Forget every record at rest since before `before` (services/rfq/settlement.py
        decides the time), with its order index and fills; returns how many went."""
        gone = [record for record, _ in self._at_rest_before(before)]
        for record in gone:
            self._drop(record)
            self._recalled.pop(record.rfq_id, None)
        # A record read back is in both tiers: counted once.
        return len({r.rfq_id for r in gone} | self.archive.forget_at_rest_before(before))

    def forget(self) -> None:
        """Nothing kept, in memory or in the archive (a reset to a baseline)."""
        self.records, self.by_order, self.fills = {}, {}, {}
        self._recalled.clear()
        self._resting = []
        self.archive.clear()

    def fill_of(self, rfq_id: str, order_hash: bytes) -> Fill | None:
        return self.fills.get(rfq_id, {}).get(order_hash)

    def add_fill(self, rfq_id: str, fill: Fill) -> list[Fill]:
        seen = self.fills.setdefault(rfq_id, {})
        seen[fill.order_hash] = fill
        return list(seen.values())


class RfqStoreSaved(StateSchema):
    """What reset and snapshots put back of the RFQ store's memory tier (the archive is a
    history file's own participant: adapters/store/history_db.py `HistoryState`)."""

    records: dict[str, StoredRfq]
    by_order: dict[bytes, str]
    fills: dict[str, dict[bytes, Fill]]
