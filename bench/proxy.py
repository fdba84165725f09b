"""What `rfqsim proxy` adds: the same flow straight to the simulator and through the proxy (its
own process, checking every exchange), side by side in one run. The flow is an integrator's at
a fixed arrival rate (open loop): one firm quote in five, the other four reads of recent RFQs'
status, the way an app asks for a quote and then polls it. Rounds alternate direct and proxied
so drift on the shared machine hits both alike, and latencies are merged per side. Also the
proxy's CPU per exchange, its resident memory as the run goes on, and what its checks found in
the bench's own traffic (nothing, or the bench measures the wrong thing).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench import processes
from bench.firm_open import FirmLoad, cpu_seconds
from bench.open_loop import OpenLoopResult, open_loop
from bench.report import Section
from bench.sim_api import FAST_MAKERS

FIRM_EVERY = 5  # one request in five is a firm quote, the others status reads
RECENT = 20  # the firm RFQs the reads cycle through
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


@dataclass
class IntegratorFlow:
    """An integrator's traffic: firm quotes (keyed takers, proof of funds on) and, four times
    as often, reads of the latest firm RFQs' status."""

    base: str
    firm: FirmLoad
    headers: dict[str, str]
    recent: list[str]  # rfqIds of firm quotes already answered, newest last
    result: OpenLoopResult = field(default_factory=lambda: OpenLoopResult(0.0, 0.0))

    async def one(self, session: aiohttp.ClientSession, index: int, scheduled: float) -> None:
        if index % FIRM_EVERY == 0:
            body = dict(self.firm.body, taker=self.firm.takers[index % len(self.firm.takers)])
            kind = "firm"
            request = session.post(f"{self.base}/v2/rfq/request", json=body, headers=self.headers)
        else:
            rfq_id = self.recent[-1 - index % len(self.recent)]
            kind = "status"
            request = session.get(f"{self.base}/v2/rfq/{rfq_id}", headers=self.headers)
        async with request as resp:
            payload = await resp.json(content_type=None)
        self.result.latencies_ms.append((time.perf_counter() - scheduled) * 1000)
        label = f"{kind} {resp.status}"
        self.result.outcomes[label] = self.result.outcomes.get(label, 0) + 1
        if kind == "firm" and resp.status == 200:
            self.recent.append(str(payload["data"]["rfqId"]))
            del self.recent[:-RECENT]

    async def run(self, session: aiohttp.ClientSession, rate: float, seconds: float) -> None:
        async def send(index: int, scheduled: float) -> None:
            await self.one(session, index, scheduled)

        took, late_starts = await open_loop(rate, seconds, send)
        self.result.seconds += took
        self.result.late_starts += late_starts
        self.result.offered_rate = rate


async def _rounds(
    api: str, url: str, info: dict[str, Any], pid: int, rate: float, seconds: float, rounds: int
) -> tuple[IntegratorFlow, IntegratorFlow, list[float], float]:
    memory: list[float] = []
    proxy_cpu = 0.0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        firm = FirmLoad(api, info)
        await firm.prepare(session)
        recent: list[str] = []
        direct = IntegratorFlow(api, firm, firm.headers, recent)
        proxied = IntegratorFlow(url, firm, firm.headers, recent)
        for _ in range(RECENT):
            await direct.one(session, 0, time.perf_counter())
        await proxied.run(session, rate=20, seconds=1)  # warm-up through the proxy
        direct.result, proxied.result = OpenLoopResult(0.0, 0.0), OpenLoopResult(0.0, 0.0)
        memory.append(processes.rss_mb(pid))
        for index in range(rounds):
            order = [direct, proxied]
            for flow in order if index % 2 == 0 else order[::-1]:
                cpu = cpu_seconds(pid)
                await flow.run(session, rate, seconds)
                if flow is proxied:
                    proxy_cpu += cpu_seconds(pid) - cpu
                await asyncio.sleep(1.0)  # stragglers and sweeps settle between rounds
            memory.append(processes.rss_mb(pid))
    per_exchange_ms = proxy_cpu * 1000 / max(1, len(proxied.result.latencies_ms))
    return direct, proxied, memory, per_exchange_ms


def bench_proxy(rate: float, seconds: float, rounds: int) -> Section:
    with (
        processes.simulator("--config", str(FAST_MAKERS)) as started,
        tempfile.TemporaryDirectory() as report_dir,
    ):
        api = started.info["api_url"]
        with proxy(api, Path(report_dir)) as (process, url):
            straight, through, memory, cpu_ms = asyncio.run(
                _rounds(api, url, started.info, process.pid, rate, seconds, rounds)
            )
        found = json.loads((Path(report_dir) / "violations.json").read_text())
    direct, proxied = straight.result, through.result
    added_p50 = proxied.pct(50) - direct.pct(50)
    added_p99 = proxied.pct(99) - direct.pct(99)
    section = Section(
        title="rfqsim proxy: added latency and memory",
        intro=(
            f"An integrator's flow at {rate:.0f} requests/s, open loop: one firm quote in "
            f"{FIRM_EVERY} (POST /v2/rfq/request, keyed takers, four makers answering after "
            f"1 ms), the others reads of the latest {RECENT} firm RFQs (GET /v2/rfq/{{id}}); "
            f"{rounds} rounds of {seconds:.0f} s per side, alternating direct and through "
            "`rfqsim proxy` (a process of its own, every exchange checked: a quote's orders "
            "decoded and its terms held to the request, each record against its quote, the "
            "schemas validated, the state kept); latencies merged per side. Simulator, proxy, "
            "load generator and Anvil share the 2 cores. Targets: the proxy adds at most "
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
    section.notes.append(f"Proxy CPU time per exchange: {cpu_ms:.2f} ms.")
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
