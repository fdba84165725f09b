"""Firm quotes open loop: requests arrive at a fixed rate (50, 100, 200 per second), so latency
is not hidden by coordinated omission; each row also reads the simulator's Server-Timing (time
inside minus time waiting for makers) and the simulator process's CPU per answer. Rows for the
fleet inside the simulator's process and in a process of its own (`--makers-process own`: a
child of `rfqsim serve` behind its control channel), each with its start-up time, and the
reply-budget row at 100/s with one maker slower than the budget."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import aiohttp
import psutil

from bench import processes
from bench.load import percentile
from bench.open_loop import OpenLoopResult, run_open_loop
from bench.report import Section
from bench.sim_api import FAST_MAKERS, call_json, setup_bench_key, slow_down_maker, token_address
from rfqkit.svg_chart import PALETTE, Series, lines

BUDGET_MS = 750.0
ADDED_WARN_MS = 10.0
P99_TARGET_MS = 50.0


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


class FirmLoad:
    """Keyed takers (proof of funds on) asking for firm quotes on chain 97."""

    def __init__(self, api: str, info: dict[str, Any]) -> None:
        self.api = api
        self.takers = [w["address"] for w in info["demo_wallets"]]
        self.body = {
            "chainId": 97,
            "sellToken": token_address(info, 97, "USDT"),
            "buyToken": token_address(info, 97, "NGNS"),
            "sellAmount": str(10**17),
        }
        self.headers: dict[str, str] = {}

    async def prepare(self, session: aiohttp.ClientSession) -> None:
        key = await setup_bench_key(session, self.api)
        self.headers = {"Authorization": f"Bearer {key}"}
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline:  # until every maker answers (own process: connects)
            payload = await call_json(
                session,
                "POST",
                f"{self.api}/v2/rfq/request",
                json=dict(self.body, taker=self.takers[0]),
                headers=self.headers,
            )
            routing = payload["data"].get("routing") or {}
            if routing.get("openMarketQuotesReceived", 0) >= 4:
                break
            await asyncio.sleep(0.2)
        # Warm-up: connections open, code paths hot.
        await self.run(session, rate=20, seconds=1)

    async def run(
        self,
        session: aiohttp.ClientSession,
        *,
        rate: float,
        seconds: float,
        failures_counted: bool = False,
    ) -> Any:
        return await run_open_loop(
            session,
            f"{self.api}/v2/rfq/request",
            rate=rate,
            seconds=seconds,
            body=lambda i: dict(self.body, taker=self.takers[i % len(self.takers)]),
            headers=self.headers,
            label=lambda status, p: p["data"]["status"] if status == 200 else f"http {status}",
            failures_counted=failures_counted,
        )


async def _rates(
    api: str, info: dict[str, Any], pid: int, rates: tuple[float, ...], seconds: float
) -> list[tuple[OpenLoopResult, float]]:
    results = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        load = FirmLoad(api, info)
        await load.prepare(session)
        for rate in rates:
            cpu = cpu_seconds(pid)
            result = await load.run(session, rate=rate, seconds=seconds)
            answers = max(1, len(result.latencies_ms))
            results.append((result, (cpu_seconds(pid) - cpu) * 1000 / answers))
            await asyncio.sleep(1.0)  # let stragglers and the sweeps settle between rows
    return results


def _row(wiring: str, result: OpenLoopResult, cpu_ms: float) -> tuple[str, ...]:
    added = result.added_ms
    return (
        wiring,
        f"{result.offered_rate:.0f}",
        f"{result.achieved_rate:.0f}",
        f"{result.pct(50):.1f}",
        f"{result.pct(99):.1f}",
        f"{max(result.latencies_ms):.1f}",
        f"{percentile(added, 99):.1f}" if added else "—",
        f"{cpu_ms:.1f}",
        ", ".join(f"{k}: {v}" for k, v in sorted(result.outcomes.items())),
    )


def bench_firm_open_loop(rates: tuple[float, ...], seconds: float) -> Section:
    section = Section(
        title="Firm quotes, open loop: fixed arrival rates",
        intro=(
            f"Arrivals at a fixed rate for {seconds:.0f} s per row (latency from each request's "
            "scheduled start, so a stalled server cannot slow the load down); keyed takers with "
            "proof of funds on, four makers answering after 1 ms, every quote a real signed order "
            "checked on chain. 'added p99': Server-Timing `sim` minus `makers`, per request. "
            "'CPU/answer': the simulator process's CPU time per answer (background work "
            "included). Load generator, simulator, makers and Anvil share the 2 cores (the load "
            "average before the run is in the last line). Targets at 100/s: p99 <= "
            f"{P99_TARGET_MS:.0f} ms, "
            f"added p99 <= {ADDED_WARN_MS:.0f} ms."
        ),
        header=(
            "fleet",
            "offered/s",
            "achieved/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "added p99 ms",
            "CPU/answer ms",
            "outcomes",
        ),
    )
    load_before = os.getloadavg()[0]
    startup: list[str] = []
    measured: dict[str, list[OpenLoopResult]] = {}
    for wiring, label in (
        ("in", "in the simulator's process"),
        ("own", "own process (makers_process: own)"),
    ):
        with processes.simulator(
            "--config", str(FAST_MAKERS), "--makers-process", wiring
        ) as started:
            startup.append(f"{wiring} {started.seconds_to_ready:.2f} s")
            for result, cpu_ms in asyncio.run(
                _rates(started.info["api_url"], started.info, started.process.pid, rates, seconds)
            ):
                section.rows.append(_row(label, result, cpu_ms))
                measured.setdefault(wiring, []).append(result)
    section.notes.append(f"Start-up to the ready file (fleet ready): {', '.join(startup)}.")
    section.notes.append(f"Load average (1 min) of the machine before the run: {load_before:.2f}.")
    section.chart = open_loop_chart(measured)
    return section


def open_loop_chart(measured: dict[str, list[OpenLoopResult]]) -> str:
    """Latency against the offered rate, p50 and p99 per fleet wiring, with the simulator-added
    p99 and the 50 ms p99 target: where the curve bends is the rate the machine carries."""
    colors = {"in": PALETTE[0], "own": PALETTE[1]}
    series: list[Series] = []
    for wiring, results in measured.items():
        rows = sorted(results, key=lambda r: r.offered_rate)
        color = colors.get(wiring, PALETTE[4])
        series.append(
            Series(f"fleet {wiring}: p99", [(r.offered_rate, r.pct(99)) for r in rows], color)
        )
        series.append(
            Series(
                f"fleet {wiring}: p50",
                [(r.offered_rate, r.pct(50)) for r in rows],
                color,
                dashed=True,
            )
        )
        series.append(
            Series(
                f"fleet {wiring}: simulator-added p99",
                [
                    (r.offered_rate, percentile(r.added_ms, 99) if r.added_ms else None)
                    for r in rows
                ],
                PALETTE[2] if wiring == "in" else PALETTE[5],
                dashed=True,
            )
        )
    return lines(
        series,
        title="Firm quotes, open loop: answer time against the offered rate",
        x_label="offered firm requests per second",
        y_label="milliseconds (log scale)",
        guides=[(P99_TARGET_MS, f"p99 target {P99_TARGET_MS:g} ms (at 100/s)")],
        log_y=True,  # past saturation the answer times jump by decades
    )


async def _budget(api: str, info: dict[str, Any], rate: float, seconds: float) -> Any:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        load = FirmLoad(api, info)
        await load.prepare(session)
        await slow_down_maker(session, api, "delta", 1500)
        return await load.run(session, rate=rate, seconds=seconds)


def bench_budget_open_loop(rate: float, seconds: float) -> Section:
    with processes.simulator("--config", str(FAST_MAKERS)) as started:
        result = asyncio.run(_budget(started.info["api_url"], started.info, rate, seconds))
    over = [ms - BUDGET_MS for ms in result.latencies_ms]
    section = Section(
        title="Reply budget under load: one maker slower than the budget",
        intro=(
            f"Open loop, {rate:.0f} firm requests/s for {seconds:.0f} s; maker delta answers "
            "after 1,500 ms, the other three after 1 ms, so every request waits out the 750 ms "
            "reply budget; fleet in the simulator's process."
        ),
        header=("measure", "value", "target"),
    )
    section.rows += [
        ("achieved answers/s", f"{result.achieved_rate:.0f}", "—"),
        ("p50 answer time", f"{result.pct(50):.1f} ms", "—"),
        ("p99 answer time minus budget", f"{percentile(over, 99):+.1f} ms", "≤ +30 ms"),
        ("max answer time minus budget", f"{max(over):+.1f} ms", "—"),
        (
            "simulator-added p99 (sim - makers)",
            f"{percentile(result.added_ms, 99):.1f} ms" if result.added_ms else "—",
            f"≤ {ADDED_WARN_MS:.0f} ms",
        ),
        ("outcomes", ", ".join(f"{k}: {v}" for k, v in sorted(result.outcomes.items())), "—"),
    ]
    return section


__all__ = ["bench_budget_open_loop", "bench_firm_open_loop"]
