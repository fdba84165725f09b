"""The timelines that left memory, in the history database (services/shared/timeline_search.py
`SearchableArchive`): one row per object, with the columns a list filters on (status, taker,
pair, creation time) indexed, and one row per maker involved, so `GET /_sim/rfqs?taker=...` over
a day of history is an index range, not a walk.

What was put stays readable from `_pending` until the writer has committed it (history_db.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from simulator.adapters.store.history_db import HistoryDb, pack, unpack
from simulator.services.shared.state import StateSchema
from simulator.services.shared.timeline_search import (
    TAKER_FIELDS,
    TimelineFilter,
    key_of,
    makers_of,
    pair_of,
)
from simulator.services.shared.timelines import Timeline

_PUT = (
    "INSERT OR REPLACE INTO timelines "
    "(topic, id, created_at, status, taker, pair, item, timeline) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_PUT_MAKER = (
    "INSERT OR REPLACE INTO timeline_makers (topic, maker, created_at, id) VALUES (?, ?, ?, ?)"
)


class _Row(StateSchema):
    timeline: Timeline


def _list_item(text: str) -> Timeline:
    """What a list shows of a timeline in the file: all but its steps, read without them."""
    object_id, created_at, status, summary = json.loads(text)
    return Timeline(object_id, created_at, status, summary)


def _taker(topic: str, timeline: Timeline) -> str | None:
    taker = timeline.summary.get(TAKER_FIELDS.get(topic, "taker"))
    return taker.lower() if isinstance(taker, str) else None


class SqliteTimelineArchive:
    def __init__(self, db: HistoryDb) -> None:
        self.db = db
        self._pending: dict[tuple[str, str], tuple[int, Timeline]] = {}
        self._forgotten_before = float("-inf")  # rows created before this are gone (or going)

    def _prune(self) -> None:
        committed = self.db.committed
        if self._pending and min(seq for seq, _ in self._pending.values()) <= committed:
            self._pending = {k: v for k, v in self._pending.items() if v[0] > committed}

    def put(self, topic: str, timelines: list[Timeline]) -> None:
        makers: list[tuple[str, str, float, str]] = []
        for t in timelines:
            makers.extend((topic, m, t.created_at, t.object_id) for m in makers_of(t.summary))

        def rows() -> list[tuple[str, str, float, str, str | None, str | None, str, bytes]]:
            return [  # on the writer thread
                (
                    topic,
                    t.object_id,
                    t.created_at,
                    t.status.lower(),
                    _taker(topic, t),
                    pair_of(t.summary),
                    json.dumps([t.object_id, t.created_at, t.status, t.summary]),
                    pack(_Row(timeline=t)),
                )
                for t in timelines
            ]

        self.db.write_many(_PUT_MAKER, makers)
        seq = self.db.write_many(_PUT, rows)
        self._prune()
        for t in timelines:
            self._pending[(topic, t.object_id)] = (seq, t)

    def get(self, topic: str, object_id: str) -> Timeline | None:
        self._prune()
        if (pending := self._pending.get((topic, object_id))) is not None:
            return pending[1]
        rows = self.db.read(
            "SELECT timeline FROM timelines WHERE topic = ? AND id = ? AND created_at >= ?",
            (topic, object_id, self._forgotten_before),
        )
        return unpack(_Row, rows[0][0]).timeline if rows else None

    def search(
        self, topic: str, where: TimelineFilter, limit: int, exclude: set[str]
    ) -> list[Timeline]:
        self._prune()
        pending = [
            t
            for (kind, _), (_, t) in self._pending.items()
            if kind == topic and t.object_id not in exclude and where.matches(topic, t)
        ]
        skip = exclude | {
            t.object_id for (kind, _), (_, t) in self._pending.items() if kind == topic
        }
        since = max(where.since or self._forgotten_before, self._forgotten_before)
        sql, params = self._query(topic, replace(where, since=since), limit + len(skip))
        found: list[Timeline] = []
        for object_id, text in self.db.read(sql, params):
            if object_id not in skip:
                skip.add(object_id)  # once, even when two of its makers matched
                found.append(_list_item(text))
        merged = sorted([*pending, *found], key=key_of, reverse=True)
        return merged[:limit]

    @staticmethod
    def _query(topic: str, where: TimelineFilter, limit: int) -> tuple[str, list[Any]]:
        """Newest first by (created_at, id), which every index ends with, so a page is an
        index range however many rows match. By maker, the walk is over the maker rows (a
        timeline named by both a maker's wallet and its credential prefix comes twice: the
        caller drops the second)."""
        order = "t"
        source = "timelines t"
        clauses: list[str] = []
        params: list[Any] = []
        if where.makers is not None:
            order = "m"
            source = "timeline_makers m JOIN timelines t ON t.topic = m.topic AND t.id = m.id"
            clauses.append(f"m.topic = ? AND m.maker IN ({', '.join('?' for _ in where.makers)})")
            params += [topic, *sorted(where.makers)]
        else:
            clauses.append("t.topic = ?")
            params.append(topic)
        for column, value in (
            ("status", where.status),
            ("taker", where.taker),
            ("pair", where.pair),
        ):
            if value is not None:
                clauses.append(f"t.{column} = ?")
                params.append(value)
        if where.since is not None:
            clauses.append(f"{order}.created_at >= ?")
            params.append(where.since)
        if where.until is not None:
            clauses.append(f"{order}.created_at < ?")
            params.append(where.until)
        if where.before is not None:
            at, object_id = where.before
            clauses.append(
                f"({order}.created_at < ? OR ({order}.created_at = ? AND {order}.id < ?))"
            )
            params += [at, at, object_id]
        sql = (
            f"SELECT t.id, t.item FROM {source} WHERE {' AND '.join(clauses)} "
            f"ORDER BY {order}.created_at DESC, {order}.id DESC LIMIT ?"
        )
        factor = 2 if where.makers is not None and len(where.makers) > 1 else 1
        return sql, [*params, limit * factor]

    def forget_before(self, created_before: float) -> None:
        self._prune()
        self._pending = {
            k: v for k, v in self._pending.items() if v[1].created_at >= created_before
        }
        self.db.write("DELETE FROM timeline_makers WHERE created_at < ?", (created_before,))
        self.db.write("DELETE FROM timelines WHERE created_at < ?", (created_before,))
        self._forgotten_before = max(self._forgotten_before, created_before)

    def all(self, topic: str) -> list[Timeline]:
        self._prune()
        rows = self.db.read(
            "SELECT id, timeline FROM timelines WHERE topic = ? AND created_at >= ? "
            "ORDER BY created_at",
            (topic, self._forgotten_before),
        )
        kept = {str(i): unpack(_Row, text).timeline for i, text in rows}
        kept.update(
            (object_id, t) for (kind, object_id), (_, t) in self._pending.items() if kind == topic
        )
        return sorted(kept.values(), key=lambda t: t.created_at)

    def restored(self) -> None:
        """The file was replaced by a backup (history_db.py `HistoryState`)."""
        self._pending = {}
        self._forgotten_before = float("-inf")

    def clear(self, topic: str) -> None:
        """Waits for the writer: no read after a reset may find a row from before it."""
        self._pending = {k: v for k, v in self._pending.items() if k[0] != topic}
        self.db.write("DELETE FROM timeline_makers WHERE topic = ?", (topic,))
        self.db.write("DELETE FROM timelines WHERE topic = ?", (topic,))
        self.db.flush()
