"""The RFQ store: every RFQ record, the order-hash index fills find them by and the Fill logs seen
per RFQ (the reactors' trade history is the rates feed's tape, services/feed/store.py). Plain
in-memory state behind the `RfqStore` port (ports.py), shared by RfqService and Settlement (one
store per area, so reset and snapshots work store by store).

Nothing here awaits, so every method is atomic on the event loop. The read-modify-writes that span
an await are the callers': settlement re-checks a record's status after its receipt read, and the
taker-funds reservation keeps its own lock (funds.py)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import StateSchema


@dataclass
class InMemoryRfqStore:
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

    def add(self, record: StoredRfq) -> None:
        self.records[record.rfq_id] = record

    def get(self, rfq_id: str) -> StoredRfq | None:
        return self.records.get(rfq_id)

    def discard(self, rfq_id: str) -> None:
        self.records.pop(rfq_id, None)

    def all(self) -> list[StoredRfq]:
        return list(self.records.values())

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

    def by_order_hash(self, order_hash: bytes) -> StoredRfq | None:
        rfq_id = self.by_order.get(order_hash)
        return self.records.get(rfq_id) if rfq_id is not None else None

    def evict_at_rest(self, before: float) -> int:
        """Forget every record at rest since before `before` (services/rfq/settlement.py
        decides the time), with its order index and fills; returns how many went."""
        gone = [
            r
            for r in self.records.values()
            if (since := r.at_rest_since()) is not None and since < before
        ]
        for record in gone:
            del self.records[record.rfq_id]
            self.fills.pop(record.rfq_id, None)
            if record.quote is not None:
                for order in record.quote.orders:
                    if self.by_order.get(order.order_hash) == record.rfq_id:
                        del self.by_order[order.order_hash]
        return len(gone)

    def add_fill(self, rfq_id: str, fill: Fill) -> list[Fill]:
        seen = self.fills.setdefault(rfq_id, {})
        seen[fill.order_hash] = fill
        return list(seen.values())


class RfqStoreSaved(StateSchema):
    """What reset and snapshots put back of the RFQ store: all of it."""

    records: dict[str, StoredRfq]
    by_order: dict[bytes, str]
    fills: dict[str, dict[bytes, Fill]]
