"""What the rates feed's tape costs in the history file: per fill, the event loop's share on the
fill indexer's path (`FeedStore.add` over `SqliteTradeArchive`: the once-only lookup, the queue
entry, the ticker window's second; the tape in memory, `MemoryTrades`, for comparison) and the
history writer's sender thread's share (`trade_rows`), as thread CPU time; then what reading
costs the event loop over a file of `--file-rows` trades of one market: `/historical_trades`
pages (wall time, best of five), and the 24 h figures of /tickers over `--window` trades three
ways: the per-second window kept in memory (what the feed does), a walk over the trades in
memory (what it did before), and the window's rows read from the file and summed exactly.

python -m bench.trade_rows [--count N] [--file-rows N] [--window N]

The fills are USDT_NGN trades on chain 97, ten a second, alternately buys and sells; the loop
hands them over in batches of 500 (an indexer poll), then lets the event loop turn once."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from simulator.adapters.store.history_db import HistoryDb
from simulator.adapters.store.trade_archive import SqliteTradeArchive, trade_rows
from simulator.services.feed.model import EXACT, ZERO, Side, TradeRecord, price_of, units
from simulator.services.feed.paging import page
from simulator.services.feed.ports import TradeArchive
from simulator.services.feed.store import FeedStore
from simulator.services.feed.tape import MemoryTrades
from simulator.services.feed.window import TickerWindow
from simulator.services.shared.fills import Fill

BATCH = 500
PER_SECOND = 10
T0 = 1_800_000_000
TICKER = "USDT_NGN"
USDT, NGNS = "0x" + "a1" * 20, "0x" + "a3" * 20


def fill_and_trade(n: int) -> tuple[Fill, TradeRecord]:
    second, block = T0 + n // PER_SECOND, 1 + n // PER_SECOND
    side: Side = "buy" if n % 2 else "sell"
    usdt, ngns = 10**18 + n, 1_600 * 10**6 + n
    fill = Fill(
        chain_id=97,
        tx_hash="0x" + f"{n:064x}",
        log_index=n % PER_SECOND,
        block_time=float(second),
        order_hash=bytes(32),
        maker="0x" + "be" * 20,
        taker="0x" + "ca" * 20,
        input_token=USDT if side == "buy" else NGNS,
        input_amount=usdt if side == "buy" else ngns,
        output_token=NGNS if side == "buy" else USDT,
        output_amount=ngns if side == "buy" else usdt,
        fee_amount=0,
        block_number=block,
    )
    base, target = units(usdt, 18), units(ngns, 6)
    trade = TradeRecord(
        trade_id=f"{fill.tx_hash}-{fill.log_index}",
        ticker_id=TICKER,
        side=side,
        timestamp=second,
        order=(second, 97, block, fill.log_index),
        base_volume=base,
        target_volume=target,
        price=price_of(target, base),
    )
    return fill, trade


def _append_us(archive: TradeArchive, work: list[list[tuple[Fill, TradeRecord]]]) -> float:
    """Event-loop thread CPU per fill of `FeedStore.add`, a loop turn after each batch."""
    store = FeedStore(archive)

    async def run() -> float:
        spent = 0.0
        for batch in work:
            began = time.thread_time()
            for fill, trade in batch:
                store.add(fill, trade)
            await asyncio.sleep(0)  # the turn that hands the batch to the writer
            spent += time.thread_time() - began
        return spent

    return asyncio.run(run()) / sum(len(b) for b in work) * 1e6


def measure(count: int) -> dict[str, float]:
    work = [
        [fill_and_trade(n) for n in range(start, min(start + BATCH, count))]
        for start in range(0, count, BATCH)
    ]
    began = time.thread_time()
    for batch in work:
        trade_rows(batch)
    sender = (time.thread_time() - began) / count * 1e6
    memory = _append_us(MemoryTrades(), work)
    with tempfile.TemporaryDirectory() as tmp:
        db = HistoryDb(Path(tmp) / "history.sqlite3")
        try:
            db.open()
            loop = _append_us(SqliteTradeArchive(db), work)
            db.flush()
        finally:
            db.close()
    return {"loop_us": loop, "memory_loop_us": memory, "sender_us": sender}


def _best_ms(step: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(5):
        began = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - began)
    return best * 1000


def reads(file_rows: int, window: int) -> dict[str, float]:
    middle = T0 + file_rows // PER_SECOND // 2
    with tempfile.TemporaryDirectory() as tmp:
        db = HistoryDb(Path(tmp) / "history.sqlite3")
        try:
            archive = SqliteTradeArchive(db)
            for start in range(0, file_rows, 5_000):
                pairs = [fill_and_trade(n) for n in range(start, min(start + 5_000, file_rows))]
                db.write_many(
                    "INSERT INTO feed_trades (chain_id, tx_hash, log_index, ts, block, ticker_id,"
                    " side, base_volume, target_volume, price)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    trade_rows(pairs),
                )
            db.flush()

            def trades(limit: int, side: Side | None = None, **bounds: int) -> None:
                newest = archive.newest_first(
                    TICKER, side, bounds.get("start_time"), bounds.get("end_time")
                )
                page(newest, limit)

            timings = {
                "page, newest 200 a side": _best_ms(lambda: trades(200)),
                "page, newest 1000 sells": _best_ms(lambda: trades(1000, "sell")),
                "page, 200 a side ending mid-file": _best_ms(lambda: trades(200, end_time=middle)),
                "page, 200 a side of one minute": _best_ms(
                    lambda: trades(200, start_time=middle, end_time=middle + 59)
                ),
            }
            recent = [fill_and_trade(n)[1] for n in range(file_rows - window, file_rows)]
            kept = TickerWindow()
            for trade in recent:
                kept.add(trade)
            since = recent[0].timestamp

            def by_seconds() -> None:
                seconds = kept.since(since)
                total = ZERO
                for second in seconds:
                    total = EXACT.add(total, second.base_volume)
                max(second.high for second in seconds)

            def by_trades() -> None:
                total = ZERO
                for trade in recent:
                    total = EXACT.add(total, trade.base_volume)
                max(trade.price for trade in recent)

            def from_file() -> None:
                rows = db.read(
                    "SELECT base_volume, price FROM feed_trades WHERE ticker_id = ? AND ts >= ?",
                    (TICKER, since),
                )
                total = ZERO
                for base, _ in rows:
                    total = EXACT.add(total, Decimal(base))
                max(Decimal(price) for _, price in rows)

            memory = MemoryTrades()
            for fill, trade in (fill_and_trade(n) for n in range(file_rows - window, file_rows)):
                memory.put(fill, trade)
            timings[f"page, newest 200 a side, from {window} trades in memory"] = _best_ms(
                lambda: page(memory.newest_first(TICKER, None, None, None), 200)
            )
            timings[f"tickers' window of {window} trades, per-second figures"] = _best_ms(
                by_seconds
            )
            timings[f"tickers' window of {window} trades, walking the trades"] = _best_ms(by_trades)
            timings[f"tickers' window of {window} trades, read from the file"] = _best_ms(from_file)
            timings["file size, MB"] = db.size_bytes() / 1e6
            return timings
        finally:
            db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--file-rows", type=int, default=1_000_000)
    parser.add_argument("--window", type=int, default=100_000)
    args = parser.parse_args()
    runs = [measure(args.count) for _ in range(3)]
    for key in ("loop_us", "memory_loop_us", "sender_us"):
        values = ", ".join(f"{run[key]:.1f}" for run in runs)
        print(f"{key}: {values} (median {statistics.median(r[key] for r in runs):.1f})")
    for label, figure in reads(args.file_rows, args.window).items():
        print(f"{label}, {args.file_rows} in the file: {figure:.1f}")


if __name__ == "__main__":
    main()
