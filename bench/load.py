"""The benchmarks' closed-loop driver: `closed_loop` runs N workers, each doing its next step as
soon as the last one answered, until told to stop. `run_load` is its common use: `concurrency`
workers send one request back to back for `seconds`, and every latency is kept (exact
percentiles, no buckets). The open-loop driver is bench/open_loop.py."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp


@dataclass(frozen=True)
class LoadResult:
    requests: int
    errors: int
    seconds: float
    latencies_ms: list[float]

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds

    @property
    def median_ms(self) -> float:
        return statistics.median(self.latencies_ms)

    @property
    def p99_ms(self) -> float:
        return percentile(self.latencies_ms, 99)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def merge(results: list[LoadResult]) -> LoadResult:
    return LoadResult(
        requests=sum(r.requests for r in results),
        errors=sum(r.errors for r in results),
        seconds=sum(r.seconds for r in results),
        latencies_ms=[ms for r in results for ms in r.latencies_ms],
    )


async def closed_loop(
    workers: int, step: Callable[[int], Awaitable[None]], *, done: Callable[[], bool]
) -> None:
    """`workers` workers, each running `step(worker index)` back to back until `done()`."""

    async def worker(index: int) -> None:
        while not done():
            await step(index)

    await asyncio.gather(*(worker(index) for index in range(workers)))


async def run_load(
    url: str,
    *,
    concurrency: int,
    seconds: float,
    json_body: Any = None,
    headers: dict[str, str] | None = None,
    expect_status: int = 200,
    next_url: Callable[[], str] | None = None,
) -> LoadResult:
    """GET `url`, or POST `json_body` to it when one is given; other statuses count as errors.
    `next_url`: after the warm-up, each request asks the URL it returns instead (a new query
    every time, e.g. to miss a cache)."""
    latencies: list[float] = []
    errors = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        # Warm-up: open the connections before the clock starts.
        def call(target: str = url) -> Any:
            if json_body is None:
                return session.get(target, headers=headers)
            return session.post(target, json=json_body, headers=headers)

        async def touch() -> None:
            async with call() as resp:
                await resp.read()

        await asyncio.gather(*(touch() for _ in range(concurrency)))
        stop_at = time.perf_counter() + seconds

        async def step(worker: int) -> None:
            nonlocal errors
            target = next_url() if next_url is not None else url
            started = time.perf_counter()
            async with call(target) as resp:
                await resp.read()
                if resp.status != expect_status:
                    errors += 1
            latencies.append((time.perf_counter() - started) * 1000)

        began = time.perf_counter()
        await closed_loop(concurrency, step, done=lambda: time.perf_counter() >= stop_at)
        elapsed = time.perf_counter() - began
    return LoadResult(len(latencies), errors, elapsed, latencies)
