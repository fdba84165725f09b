"""The RFQ records at rest in the history database (services/rfq/ports.py `RfqArchive`): one row
per record (its JSON through `ArchivedRfq`, indexed by its at-rest time) and one row per quoted
order hash.

Writes are queued to the database's writer; until it has committed them, what was put stays in
`_pending` and reads find it there, so a record is never missing between memory and disk. A
forget is answered from the rows (a count on the at-rest index) and queued as one DELETE."""

from __future__ import annotations

from simulator.adapters.store.history_db import HistoryDb, pack, unpack
from simulator.services.rfq.archived import ArchivedRfq

_PUT = "INSERT OR REPLACE INTO rfqs (id, created_at, at_rest_since, record) VALUES (?, ?, ?, ?)"
_PUT_ORDER = "INSERT OR REPLACE INTO rfq_orders (order_hash, rfq_id) VALUES (?, ?)"
_FORGET_ORDERS = (
    "DELETE FROM rfq_orders WHERE rfq_id IN (SELECT id FROM rfqs WHERE at_rest_since < ?)"
)


class SqliteRfqArchive:
    def __init__(self, db: HistoryDb) -> None:
        self.db = db
        # rfq id -> (the write that carries it, what was put): readable before it is committed
        self._pending: dict[str, tuple[int, ArchivedRfq]] = {}
        self._pending_orders: dict[bytes, str] = {}
        self._forgotten_before = float("-inf")  # rows older than this are gone (or going)

    def _prune(self) -> None:
        committed = self.db.committed
        if self._pending and min(seq for seq, _ in self._pending.values()) <= committed:
            self._pending = {k: v for k, v in self._pending.items() if v[0] > committed}
            live = set(self._pending)
            self._pending_orders = {h: i for h, i in self._pending_orders.items() if i in live}

    def put(self, records: list[ArchivedRfq]) -> None:
        orders: list[tuple[bytes, str]] = []
        for archived in records:
            record = archived.record
            assert record.at_rest_since() is not None, "only a record at rest is archived"
            if record.quote is not None:
                orders.extend((o.order_hash, record.rfq_id) for o in record.quote.orders)

        def rows() -> list[tuple[str, float, float, bytes]]:  # on the writer thread
            return [
                (a.record.rfq_id, a.record.created_at, a.record.at_rest_since() or 0.0, pack(a))
                for a in records
            ]

        self.db.write_many(_PUT_ORDER, orders)
        seq = self.db.write_many(_PUT, rows)
        self._prune()
        for archived in records:
            self._pending[archived.record.rfq_id] = (seq, archived)
        self._pending_orders.update(orders)

    def get(self, rfq_id: str) -> ArchivedRfq | None:
        self._prune()
        if (pending := self._pending.get(rfq_id)) is not None:
            return pending[1]
        rows = self.db.read(
            "SELECT record FROM rfqs WHERE id = ? AND at_rest_since >= ?",
            (rfq_id, self._forgotten_before),
        )
        return unpack(ArchivedRfq, rows[0][0]) if rows else None

    def rfq_of_order(self, order_hash: bytes) -> str | None:
        self._prune()
        if (rfq_id := self._pending_orders.get(order_hash)) is not None:
            return rfq_id
        rows = self.db.read(
            "SELECT o.rfq_id FROM rfq_orders o JOIN rfqs r ON r.id = o.rfq_id "
            "WHERE o.order_hash = ? AND r.at_rest_since >= ?",
            (order_hash, self._forgotten_before),
        )
        return str(rows[0][0]) if rows else None

    def forget_at_rest_before(self, before: float) -> set[str]:
        self._prune()
        going = {
            rfq_id
            for rfq_id, (_, archived) in self._pending.items()
            if (archived.record.at_rest_since() or before) < before
        }
        rows = self.db.read(
            "SELECT id FROM rfqs WHERE at_rest_since < ? AND at_rest_since >= ?",
            (before, self._forgotten_before),
        )
        going |= {str(rfq_id) for (rfq_id,) in rows}
        for rfq_id in going:
            self._pending.pop(rfq_id, None)
        self._pending_orders = {h: i for h, i in self._pending_orders.items() if i in self._pending}
        if going:
            self.db.write(_FORGET_ORDERS, (before,))
            self.db.write("DELETE FROM rfqs WHERE at_rest_since < ?", (before,))
        self._forgotten_before = max(self._forgotten_before, before)
        return going

    def all(self) -> list[ArchivedRfq]:
        self._prune()
        rows = self.db.read(
            "SELECT id, record FROM rfqs WHERE at_rest_since >= ? ORDER BY created_at",
            (self._forgotten_before,),
        )
        kept = {str(i): unpack(ArchivedRfq, text) for i, text in rows if i not in self._pending}
        kept.update((i, archived) for i, (_, archived) in self._pending.items())
        return sorted(kept.values(), key=lambda a: a.record.created_at)

    def count(self) -> int:
        """Waits for the writer (a bench and /_sim/runtime read it, not a request's path)."""
        self.flush()
        (rows,) = self.db.read(
            "SELECT count(*) FROM rfqs WHERE at_rest_since >= ?", (self._forgotten_before,)
        )[0]
        return int(rows)

    def clear(self) -> None:
        """Waits for the writer: no read after a reset may find a row from before it."""
        self._pending, self._pending_orders = {}, {}
        self._forgotten_before = float("-inf")
        self.db.write("DELETE FROM rfq_orders")
        self.db.write("DELETE FROM rfqs")
        self.flush()

    def flush(self) -> None:
        self.db.flush()
        self._prune()

    def restored(self) -> None:
        """The file was replaced by a backup (history_db.py `HistoryState`): nothing is pending
        and every row in it is visible."""
        self._pending, self._pending_orders = {}, {}
        self._forgotten_before = float("-inf")
