"""What the shared engine costs a firm answer: one instance with its live state in memory (the
baseline) against one instance on Redis (`--redis-url`, a redis-server on a Unix socket), same
open-loop load in the same run. Each row also reads the engine's own counters: the commands
it ran per firm answer, the server-side time of those commands, and the redis-server's CPU."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

import aiohttp
import redis

from bench import processes
from bench.firm_open import FirmLoad, cpu_seconds
from bench.load import percentile
from bench.open_loop import OpenLoopResult
from bench.report import Section
from bench.sim_api import FAST_MAKERS
from simulator.adapters.redis.server import RedisNode, start_redis

SCRIPT_COMMANDS = ("cmdstat_evalsha", "cmdstat_eval")


@dataclass
class EngineCounters:
    scripts: int  # scripts the server ran (EVALSHA / EVAL: each check or write is one)
    usec: int  # server-side time of every command (the scripts' own calls included)
    cpu_s: float  # the redis-server process's CPU


def engine_counters(node: RedisNode) -> EngineCounters:
    with redis.Redis.from_url(node.url) as client:
        stats: dict[str, Any] = client.info("commandstats")
    return EngineCounters(
        scripts=sum(int(stats.get(name, {}).get("calls", 0)) for name in SCRIPT_COMMANDS),
        usec=sum(int(s["usec"]) for s in stats.values()),
        cpu_s=cpu_seconds(node.pid),
    )


@dataclass
class Row:
    wiring: str
    result: OpenLoopResult
    cpu_ms: float  # the simulator's CPU per answer
    engine: tuple[float, float, float] | None  # per answer: scripts, server µs, server CPU ms


async def _run(
    api: str, info: dict[str, Any], pid: int, node: RedisNode | None, rates: tuple[float, ...],
    seconds: float,
) -> list[tuple[OpenLoopResult, float, tuple[float, float, float] | None]]:  # fmt: skip
    rows = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        load = FirmLoad(api, info)
        await load.prepare(session)
        for rate in rates:
            cpu = cpu_seconds(pid)
            before = engine_counters(node) if node is not None else None
            result = await load.run(session, rate=rate, seconds=seconds)
            answers = max(1, len(result.latencies_ms))
            engine = None
            if node is not None and before is not None:
                after = engine_counters(node)
                engine = (
                    (after.scripts - before.scripts) / answers,
                    (after.usec - before.usec) / answers,
                    (after.cpu_s - before.cpu_s) * 1000 / answers,
                )
            rows.append((result, (cpu_seconds(pid) - cpu) * 1000 / answers, engine))
            await asyncio.sleep(1.0)
    return rows


def bench_shared_engine(rates: tuple[float, ...], seconds: float) -> Section:
    load_before = os.getloadavg()[0]
    rows: list[Row] = []
    for wiring in ("memory", "redis"):
        node = start_redis() if wiring == "redis" else None
        extra = ("--redis-url", node.url) if node is not None else ()
        try:
            with processes.simulator("--config", str(FAST_MAKERS), *extra) as started:
                measured = asyncio.run(
                    _run(
                        started.info["api_url"],
                        started.info,
                        started.process.pid,
                        node,
                        rates,
                        seconds,
                    )
                )
        finally:
            if node is not None:
                node.stop()
        rows += [Row(wiring, result, cpu, engine) for result, cpu, engine in measured]
    section = Section(
        title="Several instances: what the shared engine adds to a firm answer",
        intro=(
            f"Open loop, {seconds:.0f} s per row, one instance with its live state in memory (the "
            "baseline) and one on Redis (`--redis-url`: outstanding slots, taker reservations, "
            "maker holds and nonces, proof nonces, Idempotency-Key records, the clock and the "
            "configuration; Debian's redis-server on a Unix socket, started by the bench), same "
            "keyed takers with proof of funds, four makers answering after 1 ms, fleet in its own "
            "process. 'added p50/p99': Server-Timing `sim` minus `makers`. Per firm answer: the "
            "scripts the engine ran (a check-and-take, a check-and-reserve, a check-and-hold "
            "per maker quote, and the writes: extend, hold, releases, the sweeps), their "
            "server-side time, and the redis-server's CPU. An instance writes each check at once, "
            "behind the writes queued before it (the writes of one event-loop turn go "
            "together), without waiting for earlier answers. "
            "Target: the engine adds at most 1 ms to the median answer (the 'added p50' "
            "difference)."
        ),
        header=(
            "state",
            "offered/s",
            "achieved/s",
            "p50 ms",
            "p99 ms",
            "added p50 ms",
            "added p99 ms",
            "CPU/answer ms",
            "engine scripts per answer",
            "engine µs/answer",
            "redis-server CPU/answer ms",
        ),
    )
    for row in rows:
        result, added = row.result, row.result.added_ms
        section.rows.append(
            (
                row.wiring,
                f"{result.offered_rate:.0f}",
                f"{result.achieved_rate:.0f}",
                f"{result.pct(50):.1f}",
                f"{result.pct(99):.1f}",
                f"{percentile(added, 50):.2f}" if added else "—",
                f"{percentile(added, 99):.1f}" if added else "—",
                f"{row.cpu_ms:.2f}",
                f"{row.engine[0]:.1f}" if row.engine else "—",
                f"{row.engine[1]:.0f}" if row.engine else "—",
                f"{row.engine[2]:.3f}" if row.engine else "—",
            )
        )
    by_rate: dict[float, dict[str, Row]] = {}
    for row in rows:
        by_rate.setdefault(row.result.offered_rate, {})[row.wiring] = row
    for rate, pair in sorted(by_rate.items()):
        memory, shared = pair.get("memory"), pair.get("redis")
        if memory is None or shared is None or not memory.result.added_ms:
            continue
        more = percentile(shared.result.added_ms, 50) - percentile(memory.result.added_ms, 50)
        section.notes.append(
            f"At {rate:.0f}/s the engine added {more:+.2f} ms to the median simulator time "
            f"(target ≤ 1 ms); the simulator's CPU per answer was "
            f"{shared.cpu_ms / memory.cpu_ms:.2f} times the baseline's."
        )
    section.notes.append(f"Load average (1 min) of the machine before the run: {load_before:.2f}.")
    return section


__all__ = ["bench_shared_engine"]
