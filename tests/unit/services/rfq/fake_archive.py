"""A fake of the RfqArchive port (services/rfq/ports.py) for unit tests: rows in a dict, each
written and read back through its JSON, as the history database does, so a record read back is
a copy and never the object that was put."""

from __future__ import annotations

from simulator.services.rfq.archived import ArchivedRfq


class MemoryRfqArchive:
    def __init__(self) -> None:
        self.rows: dict[str, str] = {}  # rfq id -> ArchivedRfq as JSON
        self.orders: dict[bytes, str] = {}

    def put(self, records: list[ArchivedRfq]) -> None:
        for archived in records:
            record = archived.record
            self.rows[record.rfq_id] = archived.model_dump_json()
            if record.quote is not None:
                self.orders.update((o.order_hash, record.rfq_id) for o in record.quote.orders)

    def get(self, rfq_id: str) -> ArchivedRfq | None:
        text = self.rows.get(rfq_id)
        return ArchivedRfq.model_validate_json(text) if text is not None else None

    def rfq_of_order(self, order_hash: bytes) -> str | None:
        rfq_id = self.orders.get(order_hash)
        return rfq_id if rfq_id in self.rows else None

    def forget_at_rest_before(self, before: float) -> set[str]:
        going = [a.record.rfq_id for a in self.all() if (a.record.at_rest_since() or 0) < before]
        for rfq_id in going:
            del self.rows[rfq_id]
        self.orders = {h: i for h, i in self.orders.items() if i in self.rows}
        return set(going)

    def all(self) -> list[ArchivedRfq]:
        found = [ArchivedRfq.model_validate_json(text) for text in self.rows.values()]
        return sorted(found, key=lambda a: a.record.created_at)

    def count(self) -> int:
        return len(self.rows)

    def clear(self) -> None:
        self.rows, self.orders = {}, {}
