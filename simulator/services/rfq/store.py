"""The RFQ store: every RFQ record, the order-hash index fills find them by and the Fill logs seen
per RFQ (the reactors' trade history is the rates feed's tape, services/feed/store.py). Plain
in-memory state behind the `RfqStore` port (ports.py), shared by RfqService and Settlement (one
store per area, so reset and snapshots work store by store).

Nothing here awaits, so every method is atomic on the event loop. The read-modify-writes that span
an await are the callers': settlement re-checks a record's status after its receipt read, and the
taker-funds reservation keeps its own lock (funds.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from simulator.services.rfq.model import RfqRecord
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import StateSchema


@dataclass
class InMemoryRfqStore:
    records: dict[str, RfqRecord] = field(default_factory=dict)  # every RFQ by id, oldest first
    by_order: dict[bytes, str] = field(default_factory=dict)  # quoted order hash -> rfq id
    fills: dict[str, dict[bytes, Fill]] = field(
        default_factory=dict
    )  # rfq id -> its Fill logs seen so far, by order hash (a bundle settles once all are in)

    def add(self, record: RfqRecord) -> None:
        self.records[record.rfq_id] = record

    def get(self, rfq_id: str) -> RfqRecord | None:
        return self.records.get(rfq_id)

    def discard(self, rfq_id: str) -> None:
        self.records.pop(rfq_id, None)

    def all(self) -> list[RfqRecord]:
        return list(self.records.values())

    def index_orders(self, record: RfqRecord) -> None:
        assert record.quote is not None, "only a quoted RFQ has orders"
        for order in record.quote.orders:
            self.by_order[order.order_hash] = record.rfq_id

    def by_order_hash(self, order_hash: bytes) -> RfqRecord | None:
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

    records: dict[str, RfqRecord]
    by_order: dict[bytes, str]
    fills: dict[str, dict[bytes, Fill]]
