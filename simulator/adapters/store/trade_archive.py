"""The rates feed's tape in the history database (services/feed/ports.py `TradeArchive`): one
row per fill the indexers handed over, keyed by (chain, tx hash, log index) so a fill handed
twice (re-indexing) is found in one lookup; a published trade's row has its market, side and
figures, indexed by (ticker, [side,] timestamp, chain, block, log index), the tape's order, so a
`/historical_trades` page is an index range read newest first, only as far as the page goes.
Figures are kept as decimal text (exact: a Decimal's text reads back to the same Decimal).

Puts are batched: the fills of one indexer poll are handed to the writer together, at the end
of the event-loop turn that put them (or every `SAVE_BATCH`); what was put stays readable from
`_pending` until the writer has committed it (history_db.py)."""

from __future__ import annotations

import asyncio
import heapq
from collections import deque
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

from simulator.adapters.store.history_db import HistoryDb
from simulator.services.feed.model import FillKey, Side, TradeRecord
from simulator.services.shared.fills import Fill

SAVE_BATCH = 500  # puts handed to the writer at once, at most
FIRST_READ = 64  # rows of a page's first read; each further read doubles, up to MAX_READ
MAX_READ = 4096
FAR = 2**62  # beyond any block's time, within SQLite's 64-bit integers (bounds are clamped to it)

_PUT = (
    "INSERT OR IGNORE INTO feed_trades (chain_id, tx_hash, log_index, ts, block, ticker_id, "
    "side, base_volume, target_volume, price) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_COLUMNS = "ts, chain_id, block, log_index, tx_hash, side, base_volume, target_volume, price"
Put = tuple[Fill, TradeRecord | None]


def trade_rows(puts: Sequence[Put]) -> list[tuple[Any, ...]]:
    """The rows of `_PUT` (on the writer's sender thread)."""
    rows: list[tuple[Any, ...]] = []
    for fill, trade in puts:
        key = (fill.chain_id, fill.tx_hash, fill.log_index, int(fill.block_time))
        if trade is None:  # a pair no market serves: on the tape, for the once-only check
            rows.append((*key, fill.block_number, None, None, None, None, None))
            continue
        figures = (str(trade.base_volume), str(trade.target_volume), str(trade.price))
        rows.append((*key, fill.block_number, trade.ticker_id, trade.side, *figures))
    return rows


def _trade(ticker_id: str, row: tuple[Any, ...]) -> TradeRecord:
    ts, chain_id, block, log_index, tx_hash, side, base, target, price = row
    return TradeRecord(
        trade_id=f"{tx_hash}-{log_index}",  # as Fill.trade_id: not stored twice
        ticker_id=ticker_id,
        side=side,
        timestamp=ts,
        order=(ts, chain_id, block, log_index),
        base_volume=Decimal(base),
        target_volume=Decimal(target),
        price=Decimal(price),
    )


class SqliteTradeArchive:
    def __init__(self, db: HistoryDb) -> None:
        self.db = db
        self._unsent: list[Put] = []  # put, not yet handed to the writer
        # fill -> (the write that carries it, None while unsent; its block's time; its trade)
        self._pending: dict[FillKey, tuple[int | None, int, TradeRecord | None]] = {}
        self._order: deque[tuple[int, FillKey]] = deque()  # (write, fill) as sent
        self._scheduled = False
        self._forgotten_before = -FAR  # rows of blocks before this are gone (or going)

    def _prune(self) -> None:
        committed, order = self.db.committed, self._order
        while order and order[0][0] <= committed:
            seq, key = order.popleft()
            pending = self._pending.get(key)
            if pending is not None and pending[0] == seq:
                del self._pending[key]

    # --- writes ------------------------------------------------------------------------------

    def put(self, fill: Fill, trade: TradeRecord | None) -> None:
        self._pending[fill.key] = (None, int(fill.block_time), trade)
        self._unsent.append((fill, trade))
        if len(self._unsent) >= SAVE_BATCH:
            self.save()
        elif not self._scheduled:
            try:
                asyncio.get_running_loop().call_soon(self.save)
            except RuntimeError:  # no loop (a tool, a synchronous test): hand it over now
                self.save()
                return
            self._scheduled = True

    def save(self) -> None:
        self._scheduled = False
        if not self._unsent:
            return
        puts, self._unsent = self._unsent, []
        seq = self.db.write_many(_PUT, lambda: trade_rows(puts))
        self._prune()
        for fill, trade in puts:
            self._pending[fill.key] = (seq, int(fill.block_time), trade)
            self._order.append((seq, fill.key))

    def forget_before(self, timestamp: int) -> None:
        self.save()  # queued before the DELETE, so it deletes them too
        self._prune()
        self._pending = {k: v for k, v in self._pending.items() if v[1] >= timestamp}
        self.db.write("DELETE FROM feed_trades WHERE ts < ?", (timestamp,))
        self._forgotten_before = max(self._forgotten_before, timestamp)

    def restored(self) -> None:
        """The file was replaced by a backup (history_db.py `HistoryState`): nothing is pending
        and every row in it is visible."""
        self._unsent, self._pending, self._order = [], {}, deque()
        self._forgotten_before = -FAR

    # --- reads -------------------------------------------------------------------------------

    def has(self, key: FillKey) -> bool:
        self._prune()
        if key in self._pending:
            return True
        rows = self.db.read(
            "SELECT 1 FROM feed_trades WHERE chain_id = ? AND tx_hash = ? AND log_index = ? "
            "AND ts >= ?",
            (*key, self._forgotten_before),
        )
        return bool(rows)

    def count(self) -> int:
        self.save()
        self.db.flush()
        self._prune()
        rows = self.db.read(
            "SELECT count(*) FROM feed_trades WHERE ts >= ?", (self._forgotten_before,)
        )
        return int(rows[0][0])

    def newest_first(
        self, ticker_id: str, side: Side | None, start_time: int | None, end_time: int | None
    ) -> Iterator[TradeRecord]:
        self._prune()
        low = min(max(self._forgotten_before, -FAR if start_time is None else start_time), FAR)
        high = max(min(FAR if end_time is None else end_time, FAR), -FAR)
        pending = sorted(
            (
                trade
                for _, _, trade in self._pending.values()
                if trade is not None
                and trade.ticker_id == ticker_id
                and (side is None or trade.side == side)
                and low <= trade.timestamp <= high
            ),
            key=lambda trade: trade.order,
            reverse=True,
        )
        merged = heapq.merge(
            pending, self._file(ticker_id, side, low, high), key=lambda t: t.order, reverse=True
        )
        last: tuple[int, int, int, int] | None = None
        for trade in merged:
            if trade.order != last:  # committed while still pending: once
                last = trade.order
                yield trade

    def _file(
        self, ticker_id: str, side: Side | None, low: int, high: int
    ) -> Iterator[TradeRecord]:
        """The file's rows newest first, read in growing steps along the tape's index."""
        side_clause = "" if side is None else " AND side = ?"
        size = FIRST_READ
        before: tuple[int, int, int, int] | None = None
        while True:
            # The cursor as a row value, and its second as the walk's upper bound.
            params: list[Any] = [ticker_id, low, high if before is None else before[0]]
            params += [] if side is None else [side]
            cursor = ""
            if before is not None:
                cursor = " AND (ts, chain_id, block, log_index) < (?, ?, ?, ?)"
                params += before
            rows = self.db.read(
                f"SELECT {_COLUMNS} FROM feed_trades "
                f"WHERE ticker_id = ? AND ts >= ? AND ts <= ?{side_clause}{cursor} "
                "ORDER BY ts DESC, chain_id DESC, block DESC, log_index DESC LIMIT ?",
                [*params, size],
            )
            for row in rows:
                yield _trade(ticker_id, row)
            if len(rows) < size:
                return
            ts, chain_id, block, log_index = rows[-1][:4]
            before = (ts, chain_id, block, log_index)
            size = min(size * 2, MAX_READ)
