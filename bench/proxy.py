"""What `rfqsim proxy` adds: the same flow, firm quotes at a fixed arrival rate, straight to the
simulator and through the proxy (its own process, checking every exchange), side by side in one
run: rounds alternate direct and proxied so drift on the shared machine hits both alike, and
latencies are merged per side. Also the proxy's resident memory as the run goes on, and what its
checks found in the bench's own traffic (nothing, or the bench measures the wrong thing)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bench import processes
from bench.firm_open import FirmLoad
from bench.open_loop import OpenLoopResult
from bench.report import Section
from bench.sim_api import FAST_MAKERS

ADDED_P50_TARGET_MS = 2.0
ADDED_P99_TARGET_MS = 5.0


@contextmanager
def proxy(upstream: str, report_dir: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`rfqsim proxy` on a free port in front of ``upstream``; stopped with SIGINT (its report
    written) on leaving."""
    process = subprocess.Popen(
        [
            str(processes.RFQSIM),
            "proxy",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            "--report",
            str(report_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if "listening on " not in line:
            raise RuntimeError(f"rfqsim proxy did not start: {line!r}")
        yield process, line.split("listening on ", 1)[1].split(" ", 1)[0]
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def _merged(results: list[OpenLoopResult], rate: float) -> OpenLoopResult:
    merged = OpenLoopResult(offered_rate=rate, seconds=sum(r.seconds for r in results))
    for result in results:
        merged.latencies_ms += result.latencies_ms
        for name, count in result.outcomes.items():
            merged.outcomes[name] = merged.outcomes.get(name, 0) + count
    return merged


async def _rounds(
    api: str, url: str, info: dict[str, Any], pid: int, rate: float, seconds: float, rounds: int
) -> tuple[OpenLoopResult, OpenLoopResult, list[float]]:
    direct: list[OpenLoopResult] = []
    proxied: list[OpenLoopResult] = []
    memory: list[float] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        straight, through = FirmLoad(api, info), FirmLoad(url, info)
        await straight.prepare(session)
        through.headers = straight.headers
        await through.run(session, rate=20, seconds=1)  # warm-up through the proxy too
        memory.append(processes.rss_mb(pid))
        for index in range(rounds):
            order = [(straight, direct), (through, proxied)]
            for load, results in order if index % 2 == 0 else order[::-1]:
                results.append(await load.run(session, rate=rate, seconds=seconds))
                await asyncio.sleep(1.0)  # stragglers and sweeps settle between rounds
            memory.append(processes.rss_mb(pid))
    return _merged(direct, rate), _merged(proxied, rate), memory


def bench_proxy(rate: float, seconds: float, rounds: int) -> Section:
    with (
        processes.simulator("--config", str(FAST_MAKERS)) as started,
        tempfile.TemporaryDirectory() as report_dir,
    ):
        api = started.info["api_url"]
        with proxy(api, Path(report_dir)) as (process, url):
            direct, proxied, memory = asyncio.run(
                _rounds(api, url, started.info, process.pid, rate, seconds, rounds)
            )
        found = json.loads((Path(report_dir) / "violations.json").read_text())
    added_p50 = proxied.pct(50) - direct.pct(50)
    added_p99 = proxied.pct(99) - direct.pct(99)
    section = Section(
        title="rfqsim proxy: added latency and memory",
        intro=(
            f"Firm quotes (POST /v2/rfq/request, keyed takers, four makers answering after "
            f"1 ms) at {rate:.0f} requests/s, open loop, {rounds} rounds of {seconds:.0f} s "
            "per side, alternating direct and through `rfqsim proxy` (a process of its own, "
            "every exchange checked: the quote's orders decoded, its schema validated, the "
            "state kept); latencies merged per side. Simulator, proxy, load generator and "
            "Anvil share the 2 cores. Targets: the proxy adds at most "
            f"{ADDED_P50_TARGET_MS:.0f} ms at p50 and {ADDED_P99_TARGET_MS:.0f} ms at p99."
        ),
        header=("path", "achieved/s", "p50 ms", "p99 ms", "max ms", "outcomes"),
    )
    for name, result in (("direct", direct), ("through rfqsim proxy", proxied)):
        section.rows.append(
            (
                name,
                f"{result.achieved_rate:.0f}",
                f"{result.pct(50):.2f}",
                f"{result.pct(99):.2f}",
                f"{max(result.latencies_ms):.1f}",
                ", ".join(f"{k}: {v}" for k, v in sorted(result.outcomes.items())),
            )
        )
    met = added_p50 <= ADDED_P50_TARGET_MS and added_p99 <= ADDED_P99_TARGET_MS
    section.rows.append(
        (
            "added by the proxy",
            "—",
            f"{added_p50:+.2f} (≤ {ADDED_P50_TARGET_MS:.0f})",
            f"{added_p99:+.2f} (≤ {ADDED_P99_TARGET_MS:.0f})",
            "—",
            "met" if met else "NOT met",
        )
    )
    section.notes.append(
        "Proxy resident memory after the warm-up, then after each round: "
        + ", ".join(f"{mb:.0f} MB" for mb in memory)
        + f" ({found['exchanges']} exchanges checked in all)."
    )
    section.notes.append(
        f"Violations the proxy found in the bench's traffic: {len(found['violations'])} "
        f"(rules exercised: {len(found['rules_exercised'])}). Load average (1 min) after the "
        f"run: {os.getloadavg()[0]:.2f}."
    )
    return section


__all__ = ["bench_proxy", "proxy"]
