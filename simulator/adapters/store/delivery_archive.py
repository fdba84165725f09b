"""The finished webhook deliveries in the history database (services/webhooks/ports.py
`DeliveryArchive`): one row per delivery, its attempts inside the compressed blob, with the
columns `GET /_sim/webhooks/deliveries` filters on (endpoint, event, status) indexed together
with the list's order (created_at, serial), and the time its last attempt started, which the
retention forgets by.

One table, not two: attempts are only ever read with their delivery, whole, and no list
filters on them, so a second table would only add a join and a row per attempt.

What was put stays readable from `_pending` until the writer has committed it (history_db.py);
the rows are built on the writer's sender thread from copies the outbox no longer changes."""

from __future__ import annotations

from collections import deque
from typing import Any

from simulator.adapters.store.history_db import HistoryDb, pack, unpack
from simulator.services.shared.state import StateSchema
from simulator.services.webhooks.model import Delivery, DeliveryFilter, creation_key, detached

_PUT = (
    "INSERT OR REPLACE INTO webhook_deliveries "
    "(id, endpoint_id, event_id, status, created_at, serial, ended_at, delivery) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


class DeliveryRow(StateSchema):
    """A delivery's blob: the whole delivery, its body as hex, its attempts."""

    delivery: Delivery


def delivery_rows(
    deliveries: list[Delivery],
) -> list[tuple[str, str, str, str, float, int, float, bytes]]:
    """The rows of `_PUT` (on the writer's sender thread)."""
    return [
        (
            d.delivery_id,
            d.endpoint_id,
            d.event_id,
            d.status,
            d.created_at,
            d.serial,
            d.ended_at,
            pack(DeliveryRow(delivery=d)),
        )
        for d in deliveries
    ]


class SqliteDeliveryArchive:
    def __init__(self, db: HistoryDb) -> None:
        self.db = db
        # delivery id -> (the write that carries it, what was put): readable before the commit
        self._pending: dict[str, tuple[int, Delivery]] = {}
        self._order: deque[tuple[int, str]] = deque()  # (write, id) as put: pruned from the left
        self._forgotten_before = float("-inf")  # rows that ended before this are gone (or going)

    def _prune(self) -> None:
        """Drop what the writer has committed: from the oldest write on, so a put costs the
        same however many are pending (one per finished delivery, put one by one)."""
        committed, order = self.db.committed, self._order
        while order and order[0][0] <= committed:
            seq, delivery_id = order.popleft()
            pending = self._pending.get(delivery_id)
            if pending is not None and pending[0] == seq:
                del self._pending[delivery_id]

    def put(self, deliveries: list[Delivery]) -> None:
        seq = self.db.write_many(_PUT, lambda: delivery_rows(deliveries))
        self._prune()
        for delivery in deliveries:
            self._pending[delivery.delivery_id] = (seq, delivery)
            self._order.append((seq, delivery.delivery_id))

    def get(self, delivery_id: str) -> Delivery | None:
        self._prune()
        if (pending := self._pending.get(delivery_id)) is not None:
            return detached(pending[1])
        rows = self.db.read(
            "SELECT delivery FROM webhook_deliveries WHERE id = ? AND ended_at >= ?",
            (delivery_id, self._forgotten_before),
        )
        return unpack(DeliveryRow, rows[0][0]).delivery if rows else None

    def find(self, where: DeliveryFilter, limit: int | None, exclude: set[str]) -> list[Delivery]:
        self._prune()
        pending = [
            detached(d)
            for _, d in self._pending.values()
            if d.delivery_id not in exclude and where.matches(d)
        ]
        skip = exclude | set(self._pending)
        clauses: list[str] = ["ended_at >= ?"]
        params: list[Any] = [self._forgotten_before]
        for column, value in (
            ("endpoint_id", where.endpoint_id),
            ("event_id", where.event_id),
            ("status", where.status),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        sql = (
            f"SELECT id, delivery FROM webhook_deliveries WHERE {' AND '.join(clauses)} "
            "ORDER BY created_at DESC, serial DESC"
        )
        args = params
        if limit is not None:  # newest first, so a page is an index range however many match
            sql += " LIMIT ?"
            args = [*params, limit + len(skip)]
        found = [
            unpack(DeliveryRow, blob).delivery
            for delivery_id, blob in self.db.read(sql, args)
            if delivery_id not in skip
        ]
        merged = sorted([*pending, *found], key=creation_key)
        return merged[-limit:] if limit is not None else merged

    def forget_finished_before(self, before: float) -> None:
        self._prune()
        self._pending = {k: v for k, v in self._pending.items() if v[1].ended_at >= before}
        self.db.write("DELETE FROM webhook_deliveries WHERE ended_at < ?", (before,))
        self._forgotten_before = max(self._forgotten_before, before)

    def clear(self) -> None:
        """Waits for the writer: no read after it may find a row from before."""
        self._pending, self._order = {}, deque()
        self._forgotten_before = float("-inf")
        self.db.write("DELETE FROM webhook_deliveries")
        self.db.flush()

    def restored(self) -> None:
        """The file was replaced by a backup (history_db.py `HistoryState`): nothing is pending
        and every row in it is visible."""
        self._pending, self._order = {}, deque()
        self._forgotten_before = float("-inf")
