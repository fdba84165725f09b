"""The rates feed's tape in the history file (adapters/store/trade_archive.py) under the feed
service: pages read from the file, from what is still pending and from both at once are those of
the tape in memory, trade for trade, at every boundary (a second split across reads, a page
ending where the committed rows start); a page is an index range; a fill handed again after it
was committed (or after a restart on the same file) is not a second trade; the retention forgets
by one DELETE; a restore from a backup shows the backup's tape, and a snapshot's copy holds
what the loop turn had not handed over yet."""

from __future__ import annotations

import contextlib
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.adapters.store import trade_archive
from simulator.adapters.store.history_db import HistoryDb
from simulator.adapters.store.trade_archive import SqliteTradeArchive
from simulator.runtime.feed import FeedStoreState
from simulator.services.feed.model import Side, TradePage
from simulator.services.feed.store import FeedStore
from simulator.services.shared.fills import Fill
from tests.unit.services.feed.harness import NGNS, T0, USDT, Harness

BASE = int(T0)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[HistoryDb]:
    db = HistoryDb(tmp_path / "history.sqlite3")
    yield db
    db.close()


def on_file(db: HistoryDb, **feed: object) -> tuple[Harness, SqliteTradeArchive]:
    """A feed whose tape is in `db` (the harness's own keeps it in memory)."""
    h = Harness((56, 97), **feed)
    archive = SqliteTradeArchive(db)
    h.feed.store = h.store = FeedStore(archive)
    return h, archive


def trade_fill(h: Harness, second: int, side: Side, chain_id: int = 97) -> Fill:
    """A USDT_NGN fill at BASE + second: `buy` when the taker received the USDT."""
    at = float(BASE + second)
    if side == "buy":
        return h.fill(
            gave=USDT, gave_amount=10**18, got=NGNS, got_amount=16 * 10**8, at=at, chain_id=chain_id
        )
    return h.fill(gave=NGNS, gave_amount=16 * 10**8, got=USDT, got_amount=10**18 + second, at=at)


def random_fills(h: Harness, rng: random.Random, count: int) -> list[Fill]:
    """Seconds with one to many trades (one second with more than a read's first step)."""
    fills: list[Fill] = []
    second = 0
    crowded = rng.randrange(5, 60)  # the second holding 150 trades
    while len(fills) < count:
        second += 1 if second < crowded else rng.choice((1, 1, 2, 5))
        for _ in range(150 if second == crowded else rng.choice((1, 1, 2, 3, 7))):
            side: Side = rng.choice(("buy", "sell"))
            fills.append(trade_fill(h, second, side, chain_id=rng.choice((56, 97))))
    return fills


def key(page: TradePage) -> tuple[list[str], list[str]]:
    return [t.trade_id for t in page.buy], [t.trade_id for t in page.sell]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_pages_from_file_and_pending_are_those_of_the_tape_in_memory(
    db: HistoryDb, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trade_archive, "FIRST_READ", 4)  # many reads per page
    rng = random.Random(seed)
    memory = Harness()
    filed, _ = on_file(db)
    fills = random_fills(memory, rng, 600)
    committed = rng.randrange(100, 500)
    for n, fill in enumerate(fills):
        await memory.add(fill)
        await filed.add(fill)
        if n == committed:
            filed.store.archive.save()
            db.flush()  # the older ones from the file, the newer still pending
    last = max(int(f.block_time) for f in fills) - BASE
    for _ in range(60):
        side: Side | None = rng.choice((None, "buy", "sell"))
        limit = rng.choice((1, 2, 5, 40, 200, 1000))
        start = rng.choice((None, BASE + rng.randrange(0, last)))
        end = rng.choice((None, BASE + rng.randrange(0, last + 1)))
        if start is not None and end is not None and start > end:
            start, end = end, start
        asked: dict[str, Any] = dict(side=side, limit=limit, start_time=start, end_time=end)
        assert key(filed.trades(**asked)) == key(memory.trades(**asked)), asked
    for start, end in ((10**40, 10**41), (None, -(10**40)), (-(10**40), 10**40)):
        asked = dict(start_time=start, end_time=end)  # beyond SQLite's integers: clamped
        assert key(filed.trades(**asked)) == key(memory.trades(**asked)), asked
    # paging back with end_time = oldest - 1 returns every trade once, from both stores
    end_time = None
    while True:
        page = filed.trades(limit=3, end_time=end_time)
        assert key(page) == key(memory.trades(limit=3, end_time=end_time))
        if not page.buy and not page.sell:
            break
        end_time = min(t.timestamp for t in page.buy + page.sell) - 1
    assert filed.store.tape("USDT_NGN").trades == memory.store.tape("USDT_NGN").trades
    everything: dict[str, Any] = dict(ticker_id=None, base=None, target=None)
    assert await filed.feed.tickers(**everything) == await memory.feed.tickers(**everything)


async def test_a_page_is_an_index_range(db: HistoryDb, monkeypatch: pytest.MonkeyPatch) -> None:
    """However long the tape, a page reads along an index in tape order: no query sorts what
    matched (SQLite's plan names no temporary B-tree)."""
    monkeypatch.setattr(trade_archive, "FIRST_READ", 2)
    h, archive = on_file(db)
    for second in range(10):
        await h.add(trade_fill(h, second, "buy"))
        await h.add(trade_fill(h, second, "sell"))
    archive.save()
    db.flush()
    read = db.read
    asked: list[tuple[str, list[Any]]] = []

    def recorded(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        asked.append((sql, list(params)))
        return read(sql, params)

    monkeypatch.setattr(db, "read", recorded)
    for side in (None, "buy", "sell"):
        h.trades(side=side, limit=5)
        h.trades(side=side, limit=5, start_time=BASE + 2, end_time=BASE + 8)
    pages = [(sql, params) for sql, params in asked if sql.startswith("SELECT ts")]
    assert any("(ts, chain_id, block, log_index) <" in sql for sql, _ in pages), "a cursor"
    for sql, params in pages:
        plan = " | ".join(row[3] for row in read(f"EXPLAIN QUERY PLAN {sql}", params))
        assert "TEMP B-TREE" not in plan, (sql, plan)
        assert " INDEX feed_trades_" in plan, (sql, plan)


async def test_a_fill_handed_again_after_commit_or_restart_is_one_trade(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    db = HistoryDb(path)
    h, archive = on_file(db)
    fill = trade_fill(h, 1, "buy")
    await h.add(fill)
    await h.add(fill)  # pending
    archive.save()
    db.flush()
    await h.add(fill)  # committed
    assert len(h.store.fills) == 1
    assert [t.trade_id for t in h.trades().buy] == [fill.trade_id]
    db.close()
    db = HistoryDb(path)  # a restart on the same file
    try:
        again, _ = on_file(db)
        assert fill.key in again.store.fills
        await again.add(fill)
        assert again.store.unlisted == 0
        assert len(again.store.fills) == 1
        assert [t.trade_id for t in again.trades().buy] == [fill.trade_id]
    finally:
        db.close()


async def test_the_retention_forgets_old_fills_and_the_windows_old_seconds(
    db: HistoryDb,
) -> None:
    h, archive = on_file(db, window_s=100, keep_trades_s=1000)
    for second in (0, 500, 950, 1100):
        await h.add(trade_fill(h, second, "sell"))
    archive.save()
    db.flush()
    await h.add(trade_fill(h, 1150, "sell"))  # still pending at the sweep
    h.clock.at = T0 + 1200
    h.feed.forget()
    db.flush()
    assert [t.timestamp - BASE for t in h.store.tape("USDT_NGN").trades] == [500, 950, 1100, 1150]
    assert len(h.store.fills) == 4
    window = h.store.window("USDT_NGN")
    assert [s.second - BASE for s in window.seconds] == [1100, 1150]
    assert window.newest is not None
    assert window.newest.timestamp == BASE + 1150
    deleted = db.read("SELECT count(*) FROM feed_trades WHERE ts < ?", (BASE + 200,))
    assert deleted == [(0,)]


async def test_a_restore_shows_the_backups_tape_and_nothing_pending(db: HistoryDb) -> None:
    h, archive = on_file(db)
    await h.add(trade_fill(h, 1, "buy"))
    archive.save()
    backup = db.backup()
    await h.add(trade_fill(h, 2, "buy"))
    archive.save()
    db.flush()
    later = trade_fill(h, 3, "sell")
    await h.add(later)  # not handed to the writer yet
    db.restore(backup)
    archive.restored()
    assert [t.timestamp - BASE for t in h.store.tape("USDT_NGN").trades] == [1]
    assert later.key not in h.store.fills


async def test_a_snapshot_holds_the_fills_put_in_the_same_loop_turn(db: HistoryDb) -> None:
    """The feed's store is dumped before the history file (registered first): its dump hands
    over what the loop turn has not handed yet, so the file's copy holds every trade the
    windows count."""
    h, _ = on_file(db)
    fill = trade_fill(h, 1, "buy")
    await h.add(fill)  # handed to the writer only at the end of this loop turn
    state = FeedStoreState(h.store).dump()
    backup = db.backup()
    with contextlib.closing(sqlite3.connect(backup)) as copy:
        rows = copy.execute("SELECT tx_hash, log_index FROM feed_trades").fetchall()
    assert rows == [(fill.tx_hash, fill.log_index)]
    assert [s["second"] for s in state["windows"]["USDT_NGN"]["seconds"]] == [BASE + 1]
