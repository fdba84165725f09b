"""The benchmarks' open-loop driver: requests start at a fixed arrival rate whatever the server's
answer times are, so a slow answer cannot hold back the next request (no coordinated omission,
unlike a closed loop of N clients, where a stalled server also stalls the load). `open_loop`
schedules any request; `run_open_loop` is its common use, one POST per arrival. The
closed-loop driver is bench/load.py.

Each latency is measured from the request's *scheduled* start, so a generator that falls behind
its own schedule (it shares the cores with the server) is charged to the latency, never hidden.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.load import percentile
from rfqkit.server_timing import server_timing


@dataclass
class OpenLoopResult:
    offered_rate: float  # requests/s scheduled
    seconds: float  # from the first scheduled start to the last answer
    latencies_ms: list[float] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    maker_wait_ms: list[float] = field(default_factory=list)  # Server-Timing `makers`
    inside_ms: list[float] = field(default_factory=list)  # Server-Timing `sim`
    late_starts: int = 0  # requests the generator started more than 5 ms after schedule
    # When each request was scheduled (perf_counter s), parallel to latencies_ms and labels,
    # and to inside_ms for the timed ones: what `window` splits a long run by.
    scheduled_s: list[float] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    timed_s: list[float] = field(default_factory=list)

    @property
    def achieved_rate(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds else 0.0

    def pct(self, pct: float) -> float:
        return percentile(self.latencies_ms, pct)

    @property
    def added_ms(self) -> list[float]:
        """Simulator-added time per request: inside the simulator minus waiting for makers."""
        return [s - m for s, m in zip(self.inside_ms, self.maker_wait_ms, strict=True)]

    def window(self, start: float, end: float) -> OpenLoopResult:
        """The requests scheduled in [start, end) (perf_counter seconds) as a result of their
        own: one minute of a soak."""
        part = OpenLoopResult(offered_rate=self.offered_rate, seconds=end - start)
        for at, ms, name in zip(self.scheduled_s, self.latencies_ms, self.labels, strict=True):
            if start <= at < end:
                part.scheduled_s.append(at)
                part.latencies_ms.append(ms)
                part.labels.append(name)
                part.outcomes[name] = part.outcomes.get(name, 0) + 1
        timed = zip(self.timed_s, self.inside_ms, self.maker_wait_ms, strict=True)
        for at, inside, makers in timed:
            if start <= at < end:
                part.timed_s.append(at)
                part.inside_ms.append(inside)
                part.maker_wait_ms.append(makers)
        return part


async def open_loop(
    rate: float, seconds: float, send: Callable[[int, float], Awaitable[None]]
) -> tuple[float, int]:
    """Start `send(index, scheduled)` at `scheduled` = start + index / rate for `seconds`; a
    send measures its latency from `scheduled`. Returns the seconds from the first scheduled
    start to the last answer, and how many sends started more than 5 ms late."""
    began = time.perf_counter()
    last_end = began
    late_starts = 0

    async def one(index: int, scheduled: float) -> None:
        nonlocal last_end
        await send(index, scheduled)
        last_end = max(last_end, time.perf_counter())

    # Only the tasks still running are held: a soak schedules hundreds of thousands, and
    # finished ones kept to the end would grow the generator's own collector pauses, which
    # the latencies would then carry.
    running: set[asyncio.Task[None]] = set()
    failures: list[BaseException] = []

    def finished(task: asyncio.Task[None]) -> None:
        running.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            failures.append(error)

    for index in range(int(rate * seconds)):
        scheduled = began + index / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        elif -delay > 0.005:
            late_starts += 1
        task = asyncio.create_task(one(index, scheduled))
        running.add(task)
        task.add_done_callback(finished)
    await asyncio.gather(*running, return_exceptions=True)
    if failures:
        raise failures[0]
    return last_end - began, late_starts


async def run_open_loop(
    session: aiohttp.ClientSession,
    url: str,
    *,
    rate: float,
    seconds: float,
    body: Callable[[int], Any],
    headers: dict[str, str] | None = None,
    label: Callable[[int, Any], str] | None = None,
    failures_counted: bool = False,
) -> OpenLoopResult:
    """POST `body(i)` to `url` at `rate` per second for `seconds`; `label(status, payload)`
    names each outcome (default: the HTTP status). A request that gets no answer (refused,
    timed out) fails the run, unless `failures_counted`: then it is an outcome `failed:
    <error>` with its time until it failed (a soak reports an overloaded minute, not a crash)."""
    result = OpenLoopResult(offered_rate=rate, seconds=0.0)

    async def send(index: int, scheduled: float) -> None:
        try:
            async with session.post(url, json=body(index), headers=headers) as resp:
                payload = await resp.json(content_type=None)
                timing = server_timing(resp.headers.get("Server-Timing"))
        except (aiohttp.ClientError, TimeoutError) as exc:
            if not failures_counted:
                raise
            record(scheduled, f"failed: {type(exc).__name__}")
            return
        name = label(resp.status, payload) if label is not None else f"http {resp.status}"
        record(scheduled, name)
        if "makers" in timing and "sim" in timing:
            result.timed_s.append(scheduled)
            result.maker_wait_ms.append(timing["makers"])
            result.inside_ms.append(timing["sim"])

    def record(scheduled: float, name: str) -> None:
        result.latencies_ms.append((time.perf_counter() - scheduled) * 1000)
        result.scheduled_s.append(scheduled)
        result.labels.append(name)
        result.outcomes[name] = result.outcomes.get(name, 0) + 1

    result.seconds, result.late_starts = await open_loop(rate, seconds, send)
    return result


__all__ = ["OpenLoopResult", "open_loop", "run_open_loop"]
