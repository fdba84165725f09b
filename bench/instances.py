"""Firm quotes per second with one instance and with a venue of two (`rfqsim serve --instances
2`: one address, two processes, Redis), the same open-loop load in the same run, rising until
the venue saturates: what several instances give on this machine, and the CPU each answer
costs the simulator's processes and the engine (what docs/scaling.md's model of N instances
on a bigger machine is built from)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

import aiohttp
import psutil

from bench import processes
from bench.firm_open import FirmLoad, cpu_seconds
from bench.open_loop import OpenLoopResult
from bench.report import Section
from bench.sim_api import FAST_MAKERS


@dataclass
class Row:
    instances: int
    result: OpenLoopResult
    cpu_ms: float  # every instance's CPU per answer
    engine_cpu_ms: float | None  # redis-server's CPU per answer


def _engine_pid(first: int) -> int | None:
    """The redis-server the first instance started."""
    for child in psutil.Process(first).children():
        if child.name() == "redis-server":
            return int(child.pid)
    return None


async def _run(
    api: str, info: dict[str, Any], pids: list[int], engine: int | None,
    rates: tuple[float, ...], seconds: float,
) -> list[tuple[OpenLoopResult, float, float | None]]:  # fmt: skip
    rows = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        load = FirmLoad(api, info)
        await load.prepare(session)
        for rate in rates:
            cpu = sum(cpu_seconds(pid) for pid in pids)
            engine_cpu = cpu_seconds(engine) if engine is not None else None
            result = await load.run(session, rate=rate, seconds=seconds)
            answers = max(1, len(result.latencies_ms))
            spent = (sum(cpu_seconds(pid) for pid in pids) - cpu) * 1000 / answers
            engine_ms = (
                (cpu_seconds(engine) - engine_cpu) * 1000 / answers
                if engine is not None and engine_cpu is not None
                else None
            )
            rows.append((result, spent, engine_ms))
            await asyncio.sleep(1.0)
    return rows


def bench_instances(rates: tuple[float, ...], seconds: float) -> Section:
    load_before = os.getloadavg()[0]
    rows: list[Row] = []
    for count in (1, 2):
        extra = ("--instances", str(count)) if count > 1 else ()
        with processes.simulator("--config", str(FAST_MAKERS), *extra) as started:
            listed = started.info.get("instances") or []
            pids = [int(i["pid"]) for i in listed] or [started.process.pid]
            engine = _engine_pid(started.process.pid) if count > 1 else None
            measured = asyncio.run(
                _run(started.info["api_url"], started.info, pids, engine, rates, seconds)
            )
        rows += [Row(count, result, cpu, engine_ms) for result, cpu, engine_ms in measured]
    section = Section(
        title="Several instances: firm quotes per second with one and two",
        intro=(
            f"Open loop, {seconds:.0f} s per row, the same keyed takers with proof of funds "
            "and four makers answering after 1 ms (the fleet in its own process), against one "
            "`rfqsim serve` and against `rfqsim serve --instances 2` (one address, the kernel "
            "handing each connection to either process, the venue's state on the Redis the "
            "first starts), offered more each row until the answers fall behind. The load "
            "generator runs on the same two cores. 'CPU/answer': every instance's CPU per "
            "answer; 'engine CPU/answer': the redis-server's."
        ),
        header=(
            "instances",
            "offered/s",
            "achieved/s",
            "quoted",
            "p50 ms",
            "p99 ms",
            "CPU/answer ms",
            "engine CPU/answer ms",
        ),
    )
    for row in rows:
        result = row.result
        answered = max(1, len(result.latencies_ms))
        section.rows.append(
            (
                str(row.instances),
                f"{result.offered_rate:.0f}",
                f"{result.achieved_rate:.0f}",
                f"{100 * result.outcomes.get('quoted', 0) / answered:.0f} %",
                f"{result.pct(50):.1f}",
                f"{result.pct(99):.1f}",
                f"{row.cpu_ms:.2f}",
                f"{row.engine_cpu_ms:.2f}" if row.engine_cpu_ms is not None else "—",
            )
        )
    for count in (1, 2):
        mine = [r for r in rows if r.instances == count]
        if mine:
            best = max(mine, key=lambda r: r.result.achieved_rate)
            section.notes.append(
                f"{count} instance{'s' if count > 1 else ''}: at most "
                f"{best.result.achieved_rate:.0f} answers/s achieved (offered "
                f"{best.result.offered_rate:.0f}/s, p99 {best.result.pct(99):.0f} ms)."
            )
    section.notes.append(f"Load average (1 min) of the machine before the run: {load_before:.2f}.")
    return section


__all__ = ["bench_instances"]
