"""The public rates feed under load (`python -m bench --only feed`).

One `rfqsim serve` with the fast maker fleet; its tape is seeded through the real indexer path:
a maker of the bench's own signs small USDT/NGNS orders exactly as makers do and a taker
executes them on chain 97's reactor in batches (`executeBatch`, 50 orders a transaction), so the
10,000 trades are real Fill logs read by the fill indexer, not records put into the store.
Then, against the bare aiohttp baseline of the same run: GET /tickers (every corridor),
GET /historical_trades at limit 1000 (as served: cached 2 s; and a cache miss on every request,
each asking another end_time), and how long a new fill takes to appear in /historical_trades.
"""

from __future__ import annotations

import asyncio
import secrets
import statistics
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from bench import processes
from bench.load import LoadResult, merge, percentile, run_load
from bench.report import Section
from bench.sim_api import FAST_MAKERS, open_limits
from conformance.wire.chain import Chain, calldata
from contracts.orders import RfqOrder, encode_order, sign_order
from rfqkit.wallets import Wallet

CHAIN = 97
BATCH = 50  # orders per executeBatch transaction
GAS_PER_ORDER = 120_000
CACHE_S = 2.0  # the feed's default cache period
FRESHNESS_TARGET_MS = CACHE_S * 1000 + 300
USDT_UNIT = 10**16  # 0.01 USDT (18 decimals) per order
NGNS_UNIT = 16 * 10**6  # 16 NGNS (6 decimals) per order


class Seeder:
    """A maker and a taker of the bench's own on chain 97, with allowances set once."""

    def __init__(self, info: dict[str, Any]) -> None:
        chain = next(c for c in info["chains"] if c["chain_id"] == CHAIN)
        self.node = Chain(chain["rpc_url"], CHAIN)
        self.reactor = chain["contracts"]["reactor"]
        self.permit2 = chain["contracts"]["signature_transfer"]
        tokens = {t["symbol"]: t["address"] for t in chain["tokens"]}
        self.usdt, self.ngns = tokens["USDT"], tokens["NGNS"]
        demo = info["demo_wallets"][-1]
        source = Wallet(demo["address"], demo["private_key"])
        self.maker, self.taker = Wallet.create(), Wallet.create()
        for wallet in (self.maker, self.taker):
            self.node.transact(source, wallet.address, value=10**19, gas=21_000)
            self.node.transfer(source, self.usdt, wallet.address, 500 * 10**18)
            self.node.transfer(source, self.ngns, wallet.address, 300_000 * 10**6)
        for token in (self.usdt, self.ngns):
            self.node.approve(self.maker, token, self.permit2, 2**256 - 1)
            self.node.approve(self.taker, token, self.reactor, 2**256 - 1)

    def _signed(self, maker_gives_usdt: bool, deadline: int) -> tuple[bytes, bytes]:
        give, gives, get, gets = (
            (self.usdt, USDT_UNIT, self.ngns, NGNS_UNIT)
            if maker_gives_usdt
            else (self.ngns, NGNS_UNIT, self.usdt, USDT_UNIT)
        )
        order = RfqOrder(
            reactor=self.reactor,
            maker=self.maker.address,
            taker=self.taker.address,
            inputToken=give,
            inputAmount=gives,
            outputToken=get,
            outputAmount=gets,
            feeAmount=gets * 5 // 10_000,
            nonce=secrets.randbits(248),
            deadline=deadline,
        )
        return encode_order(order), sign_order(self.maker.private_key, order, CHAIN, self.permit2)

    def batch(self, orders: int, index: int) -> str:
        """One transaction filling `orders` orders (both sides alternate); its hash."""
        deadline = self.node.block_timestamp() + 3600
        signed = [self._signed((index + n) % 2 == 0, deadline) for n in range(orders)]
        if orders == 1:
            data = calldata("execute((bytes,bytes))", ["(bytes,bytes)"], [signed[0]])
        else:
            data = calldata("executeBatch((bytes,bytes)[])", ["(bytes,bytes)[]"], [signed])
        receipt = self.node.transact(
            self.taker, self.reactor, data, gas=GAS_PER_ORDER * orders + 100_000
        )
        return str(receipt["transactionHash"]).lower()


async def _get_json(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url) as resp:
        return await resp.json()


async def _trade_count(api: str) -> int:
    """Every USDT_NGN trade on the feed, paged back by end_time as an aggregator would."""
    total, end = 0, None
    async with aiohttp.ClientSession() as session:
        while True:
            url = f"{api}/historical_trades?ticker_id=USDT_NGN&limit=1000"
            if end is not None:
                url += f"&end_time={end}"
            page = await _get_json(session, url)
            trades = page["buy"] + page["sell"]
            if not trades:
                return total
            total += len(trades)
            end = min(t["trade_timestamp"] for t in trades) - 1


def seed(api: str, seeder: Seeder, trades: int) -> tuple[float, int]:
    """Put `trades` fills on chain; returns (seconds spent, trades the feed then shows)."""
    began = time.perf_counter()
    for index in range(trades // BATCH):
        seeder.batch(BATCH, index)
    deadline = time.perf_counter() + 60
    count = 0
    while time.perf_counter() < deadline:
        time.sleep(CACHE_S + 0.1)  # a fresh build, not the cached page
        count = asyncio.run(_trade_count(api))
        if count >= trades:
            break
    return time.perf_counter() - began, count


async def _freshness(api: str, seeder: Seeder, fills: int) -> list[float]:
    """Per fill: from its receipt until GET /historical_trades (the URL a poller keeps asking,
    so usually a cached answer) lists its trade id."""
    delays: list[float] = []
    url = f"{api}/historical_trades?ticker_id=USDT_NGN&limit=5"
    async with aiohttp.ClientSession() as session:
        for index in range(fills):
            tx_hash = await asyncio.to_thread(seeder.batch, 1, index)
            receipt_at = time.perf_counter()
            trade_id = f"{tx_hash}-"
            while True:
                page = await _get_json(session, url)
                if any(t["trade_id"].startswith(trade_id) for t in page["buy"] + page["sell"]):
                    delays.append((time.perf_counter() - receipt_at) * 1000)
                    break
                if time.perf_counter() - receipt_at > 30:
                    raise RuntimeError(f"{tx_hash} never appeared in the feed")
                await asyncio.sleep(0.005)
            # Spread the fills over the cache period, so they meet it at every phase.
            await asyncio.sleep(secrets.randbelow(1000) / 1000 * CACHE_S / 2)
    return delays


def _end_times(api: str) -> Callable[[], str]:
    """URLs of /historical_trades at limit 1000 that no earlier request asked (a cache miss
    each): end_time walks back over the seconds the tape holds, then starts over."""
    page = asyncio.run(_latest(api))
    newest = max(t["trade_timestamp"] for t in page["buy"] + page["sell"])
    counter = iter(range(10**9))

    def next_url() -> str:
        n = next(counter)
        # Distinct end_time values beyond the tape's newest second: the page is the same full
        # 1000-trade page, but every request is a different query, so it is built afresh.
        return f"{api}/historical_trades?ticker_id=USDT_NGN&limit=1000&end_time={newest + n}"

    return next_url


async def _latest(api: str) -> Any:
    async with aiohttp.ClientSession() as session:
        return await _get_json(session, f"{api}/historical_trades?ticker_id=USDT_NGN&limit=1")


def bench_feed(seconds: float, concurrency: int, rounds: int, trades: int, fills: int) -> Section:
    base_runs: list[LoadResult] = []
    ticker_runs: list[LoadResult] = []
    cached_runs: list[LoadResult] = []
    miss_runs: list[LoadResult] = []
    with (
        processes.baseline_server() as base_url,
        processes.simulator("--config", str(FAST_MAKERS)) as started,
    ):
        api = started.info["api_url"]
        open_limits(api)
        seeder = Seeder(started.info)
        seed_seconds, seeded = seed(api, seeder, trades)
        trades_url = f"{api}/historical_trades?ticker_id=USDT_NGN&limit=1000"
        misses = _end_times(api)
        for _ in range(rounds):
            base_runs.append(
                asyncio.run(
                    run_load(f"{base_url}/v2/health", concurrency=concurrency, seconds=seconds)
                )
            )
            ticker_runs.append(
                asyncio.run(run_load(f"{api}/tickers", concurrency=concurrency, seconds=seconds))
            )
            cached_runs.append(
                asyncio.run(run_load(trades_url, concurrency=concurrency, seconds=seconds))
            )
            miss_runs.append(
                asyncio.run(
                    run_load(trades_url, concurrency=concurrency, seconds=seconds, next_url=misses)
                )
            )
        delays = asyncio.run(_freshness(api, seeder, fills))
    baseline = merge(base_runs)
    section = Section(
        title="Rates feed",
        intro=(
            f"The tape holds {seeded:,} USDT_NGN trades, seeded "
            f"through the indexer path: {trades // BATCH} `executeBatch` transactions of "
            f"{BATCH} orders signed by a maker of the bench's own on chain 97 "
            f"({seed_seconds:.0f} s including indexing), so every trade is a real Fill log. "
            f"Closed loop, {concurrency} connections, {rounds} interleaved rounds of "
            f"{seconds:.0f} s; baseline: the bare aiohttp JSON handler in the same run. The "
            "feed caches each distinct query 2 s (as served); the cache-miss row asks another "
            "end_time on every request, so each one builds and renders a full page."
        ),
        header=(
            "endpoint",
            "requests/s",
            "median ms",
            "p99 ms",
            "errors",
            "ratio to baseline",
            "target",
        ),
    )
    for name, result, target in (
        ("bare aiohttp handler (baseline)", baseline, "—"),
        ("GET /tickers (all corridors)", merge(ticker_runs), "≥ 0.6"),
        ("GET /historical_trades, limit 1000 (as served, cached 2 s)", merge(cached_runs), "≥ 0.2"),
        ("GET /historical_trades, limit 1000, a cache miss each", merge(miss_runs), "—"),
    ):
        section.rows.append(
            (
                name,
                f"{result.throughput:.0f}",
                f"{result.median_ms:.2f}",
                f"{result.p99_ms:.2f}",
                str(result.errors),
                f"{result.throughput / baseline.throughput:.2f}",
                target,
            )
        )
    section.notes.append(
        f"A new fill in /historical_trades ({len(delays)} single-order fills, from the receipt "
        "until the polled page lists it, polled every 5 ms): median "
        f"{statistics.median(delays):.0f} ms, p99 {percentile(delays, 99):.0f} ms, max "
        f"{max(delays):.0f} ms; target ≤ {FRESHNESS_TARGET_MS:.0f} ms p99 (the 2 s cache "
        "plus 300 ms)."
    )
    return section
