"""State control (docs/admin-api.md "State"): reset, snapshot and restore latency with full
stores, start-up from a state directory, an integrator suite against restarts, and the request
journal's cost on GET /v2/rfq/levels."""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from aiohttp.typedefs import Middleware

from bench import processes
from bench.load import LoadResult, merge, percentile, run_load
from bench.ramp import RampApi, _creates
from bench.report import Section
from bench.sim_api import (
    FAST_MAKERS,
    call_json,
    firm_body,
    open_limits,
    setup_bench_key,
)
from simulator.api.http.appkeys import JOURNAL, REQUEST_ID, STATE
from simulator.api.http.journal import journal_middleware
from simulator.api.http.state_gate import state_gate_middleware
from simulator.services.shared.state import StateRegistry
from simulator.services.sim.gate import RequestGate
from simulator.services.sim.journal import RequestJournal
from simulator.services.sim.state import StateControl

RESET_TARGET_S = 1.0
STATE_START_TARGET_S = 5.0
JOURNAL_OVERHEAD_TARGET = 0.10
RFQS = 1000
SUITE = "tests/integrator/test_suite_with_plugin.py"
TRANSFERS = 100


async def _fill_stores(api: str, info: dict[str, Any], rfqs: int, transfers: int) -> int:
    """`rfqs` firm quotes (20 at a time) and `transfers` ramp sells; returns the quoted count."""
    async with aiohttp.ClientSession() as session:
        key = await setup_bench_key(session, api)
        body = firm_body(info)
        gate = asyncio.Semaphore(20)
        statuses: list[str] = []

        async def one() -> None:
            async with gate:
                answer = await call_json(
                    session,
                    "POST",
                    f"{api}/v2/rfq/request",
                    json=body,
                    headers={"Authorization": f"Bearer {key}"},
                )
                statuses.append(answer["data"]["status"])

        await asyncio.gather(*(one() for _ in range(rfqs)))
        await _creates(RampApi(session, api), "sell", transfers, 10)
        return statuses.count("quoted")


async def _timed(session: aiohttp.ClientSession, method: str, url: str, **kw: Any) -> float:
    started = time.perf_counter()
    async with session.request(method, url, **kw) as resp:
        await resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {url} -> {resp.status}")
    return time.perf_counter() - started


async def _state_latencies(api: str, rounds: int) -> dict[str, list[float]]:
    """Each round: restore the loaded snapshot (timed), then reset from the loaded state
    (timed); plus snapshot takes of the loaded state."""
    times: dict[str, list[float]] = {"snapshot": [], "restore": [], "reset": []}
    async with aiohttp.ClientSession() as session:
        for index in range(rounds):
            name = f"take-{index}"
            times["snapshot"].append(
                await _timed(session, "POST", f"{api}/_sim/snapshots", json={"name": name})
            )
            await _timed(session, "DELETE", f"{api}/_sim/snapshots/{name}")
        for _ in range(rounds):
            times["restore"].append(
                await _timed(session, "POST", f"{api}/_sim/snapshots/loaded/restore")
            )
            times["reset"].append(await _timed(session, "POST", f"{api}/_sim/reset"))
    return times


def bench_state(rounds: int, starts: int) -> Section:
    with tempfile.TemporaryDirectory() as tmp:
        state_dir = Path(tmp) / "state"
        with processes.simulator(
            "--config", str(FAST_MAKERS), "--state-dir", str(state_dir)
        ) as started:
            api = started.info["api_url"]
            open_limits(api)
            quoted = asyncio.run(_fill_stores(api, started.info, RFQS, TRANSFERS))
            asyncio.run(_post(api, "/_sim/snapshots", {"name": "loaded"}))
            times = asyncio.run(_state_latencies(api, rounds))
            asyncio.run(_post(api, "/_sim/snapshots/loaded/restore", None))
        # Stopped with the loaded state: it is in the directory now.
        file_size = sum(f.stat().st_size for f in state_dir.iterdir())
        start_times = []
        for _ in range(starts):
            with processes.simulator(
                "--config", str(FAST_MAKERS), "--state-dir", str(state_dir)
            ) as resumed:
                start_times.append(resumed.seconds_to_ready)
    section = Section(
        title="State control: reset, snapshots, state directory",
        intro=(
            f"One simulator (fast makers) loaded with {RFQS} firm-quote requests ({quoted} quoted, "
            f"the rest no_quote; all stored) and {TRANSFERS} ramp transfers, snapshotted as "
            f"`loaded`. {rounds} snapshot takes of that state; then {rounds} rounds of restore "
            "`loaded` and reset from it. Each figure is the HTTP round trip from the client. "
            f"Then {starts} starts from the state directory written at its stop "
            f"({file_size / 2**20:.1f} MiB)."
        ),
        header=("measure", "median", "p99 / max", "target", "met"),
    )
    for name, label, target in (
        ("reset", "POST /_sim/reset (from the loaded state)", RESET_TARGET_S),
        ("snapshot", "POST /_sim/snapshots (loaded state)", None),
        ("restore", "POST /_sim/snapshots/loaded/restore", None),
    ):
        values = times[name]
        worst = percentile(values, 99)
        section.rows.append(
            (
                label,
                f"{statistics.median(values) * 1000:.0f} ms",
                f"{worst * 1000:.0f} ms",
                f"≤ {target * 1000:.0f} ms p99" if target else "—",
                ("yes" if worst <= target else "no") if target else "—",
            )
        )
    section.rows.append(
        (
            "start from the state directory to ready file",
            f"{statistics.median(start_times):.2f} s",
            f"{max(start_times):.2f} s",
            f"≤ {STATE_START_TARGET_S:.0f} s",
            "yes" if max(start_times) <= STATE_START_TARGET_S else "no",
        )
    )
    return section


async def _post(api: str, path: str, body: Any) -> None:
    async with aiohttp.ClientSession() as session:
        await _timed(session, "POST", f"{api}{path}", json=body)


def bench_suite_vs_restarts(restarts: int, resets: int) -> Section:
    """The integrator suite (tests/integrator: 20 tests, each from a reset) as a whole pytest
    run, against `restarts` stop-and-start cycles of the simulator it would otherwise need."""
    restart_times: list[float] = []
    for _ in range(restarts):
        began = time.perf_counter()
        with processes.simulator():
            pass
        restart_times.append(time.perf_counter() - began)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", SUITE, "-q", "--durations=0"],
        cwd=processes.REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    suite_s = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"the integrator suite failed:\n{done.stdout[-3000:]}")
    setups = _setup_durations(done.stdout)  # each test's fixture set-up: its reset
    with processes.simulator() as started:
        reset_times = asyncio.run(_resets(started.info["api_url"], resets))
    two_restarts = statistics.median(restart_times) * 2
    section = Section(
        title="Integrator suite against restarts",
        intro=(
            "`pytest tests/integrator` (20 tests on the plugin, each from a POST /_sim/reset, one "
            "simulator started for the session) as one process, timed whole (interpreter, "
            f"collection, the simulator's start and stop included); against {restarts} cycles of "
            "`rfqsim serve` start-to-ready-and-stop; and "
            f"{resets} resets of a fresh simulator."
        ),
        header=("measure", "median", "max", "ratio to two restarts"),
    )
    section.rows.append(
        (
            "one simulator restart (start to ready, stop)",
            f"{statistics.median(restart_times):.2f} s",
            f"{max(restart_times):.2f} s",
            "0.50",
        )
    )
    section.rows.append(
        (
            "the whole 20-test integrator suite",
            f"{suite_s:.2f} s",
            "—",
            f"{suite_s / two_restarts:.2f}",
        )
    )
    section.rows.append(
        (
            f"its {len(setups) - 1} resets after the first test (set-up times, summed)",
            f"{sum(setups[1:]):.2f} s",
            "—",
            f"{sum(setups[1:]) / two_restarts:.2f}",
        )
    )
    section.rows.append(
        (
            "its first test's set-up (the session's simulator start and a reset)",
            f"{setups[0]:.2f} s",
            "—",
            f"{setups[0] / two_restarts:.2f}",
        )
    )
    section.rows.append(
        (
            "one reset (no load)",
            f"{statistics.median(reset_times) * 1000:.0f} ms",
            f"{max(reset_times) * 1000:.0f} ms",
            f"{statistics.median(reset_times) / two_restarts:.3f}",
        )
    )
    section.notes.append(
        f"20 resets at the median: {statistics.median(reset_times) * 20:.1f} s, against "
        f"{two_restarts:.1f} s for two restarts."
    )
    return section


def _setup_durations(report: str) -> list[float]:
    """The set-up time of each test from pytest's --durations report, the suite's first test
    (in file order: its set-up also starts the session's simulator) first."""
    by_test = {
        test.split("::")[-1]: float(seconds)
        for seconds, test in re.findall(r"^([0-9.]+)s setup\s+(\S+)$", report, re.M)
    }
    if len(by_test) != 20:
        raise RuntimeError(f"expected 20 set-up times, found {len(by_test)}:\n{report[-3000:]}")
    source = (processes.REPO / SUITE).read_text(encoding="utf-8")
    first = re.findall(r"^async def (test_\w+)|^def (test_\w+)", source, re.M)[0]
    first_name = first[0] or first[1]
    return [by_test.pop(first_name), *by_test.values()]


async def _resets(api: str, count: int) -> list[float]:
    async with aiohttp.ClientSession() as session:
        return [await _timed(session, "POST", f"{api}/_sim/reset") for _ in range(count)]


def _middleware_cost_us(calls: int, body: bytes) -> dict[str, float]:
    """The journal's and the state gate's middleware cost per request, in process: a GET
    answered with `body` through each, and the handler called directly (median µs of 5
    batches of `calls`)."""
    app = web.Application()
    app[JOURNAL] = RequestJournal(time.time, capacity=1000, stream_capacity=10)
    app[STATE] = StateControl(
        StateRegistry(),
        RequestGate(),
        None,  # type: ignore[arg-type]  # the gate is all the middleware reads
        None,  # type: ignore[arg-type]
        time=time.time,
        monotonic=time.monotonic,
        keepable={},
    )
    response = web.Response(body=body, content_type="application/json")

    async def handler(request: web.Request) -> web.StreamResponse:
        return response

    async def batch(middleware: Middleware | None) -> float:
        request = make_mocked_request("GET", "/v2/rfq/levels?chainId=97", app=app)
        request[REQUEST_ID] = "req_bench"
        began = time.perf_counter()
        for _ in range(calls):
            if middleware is not None:
                await middleware(request, handler)
            else:
                await handler(request)
        return (time.perf_counter() - began) / calls * 1e6

    async def measure() -> dict[str, float]:
        ways: dict[str, Middleware | None] = {
            "direct": None,
            "journal": journal_middleware,
            "gate": state_gate_middleware,
        }
        return {
            name: statistics.median([await batch(way) for _ in range(5)])
            for name, way in ways.items()
        }

    return asyncio.run(measure())


def bench_journal_overhead(seconds: float, concurrency: int, rounds: int) -> Section:
    """GET /v2/rfq/levels on two simulators alike but for the journal, interleaved rounds."""
    off_runs: list[LoadResult] = []
    on_runs: list[LoadResult] = []
    off_env = {"RFQSIM_JOURNAL__ENABLED": "false"}
    with (
        processes.simulator("--config", str(FAST_MAKERS), env=off_env) as off,
        processes.simulator("--config", str(FAST_MAKERS)) as on,
    ):
        for started in (off, on):
            open_limits(started.info["api_url"])
        pairs = [(off, off_runs), (on, on_runs)]
        for index in range(rounds):
            # Alternate which goes first, so drift on a shared machine hits both alike.
            for started, runs in pairs if index % 2 == 0 else pairs[::-1]:
                url = f"{started.info['api_url']}/v2/rfq/levels?chainId=97"
                runs.append(asyncio.run(run_load(url, concurrency=concurrency, seconds=seconds)))

        async def ladder_bytes() -> bytes:
            async with (
                aiohttp.ClientSession() as session,
                session.get(f"{on.info['api_url']}/v2/rfq/levels?chainId=97") as resp,
            ):
                return await resp.read()

        body = asyncio.run(ladder_bytes())
    cost = _middleware_cost_us(20_000, body)
    without, with_journal = merge(off_runs), merge(on_runs)
    overhead = 1 - with_journal.throughput / without.throughput
    section = Section(
        title="Request journal overhead on GET /v2/rfq/levels",
        intro=(
            f"Two simulators alike but for `journal.enabled`, both running; closed loop, "
            f"{concurrency} connections, {rounds} interleaved rounds of {seconds:.0f} s each."
        ),
        header=("journal", "requests/s", "median ms", "p99 ms", "errors", "throughput lost"),
    )
    for name, result in (("off", without), ("on (default)", with_journal)):
        section.rows.append(
            (
                name,
                f"{result.throughput:.0f}",
                f"{result.median_ms:.2f}",
                f"{percentile(result.latencies_ms, 99):.2f}",
                str(result.errors),
                "—" if result is without else f"{overhead * 100:.1f} %",
            )
        )
    lost = sorted(1 - a.throughput / b.throughput for a, b in zip(on_runs, off_runs, strict=True))
    section.notes.append(
        f"Target ≤ {JOURNAL_OVERHEAD_TARGET * 100:.0f} % lost: "
        + ("met." if overhead <= JOURNAL_OVERHEAD_TARGET else "NOT met.")
        + " Throughput lost round by round (on against off in the same round): "
        + ", ".join(f"{value * 100:.1f} %" for value in lost)
        + ": the machine is shared, so rounds disagree widely either way."
    )
    for name, what in (("journal", "the journal middleware"), ("gate", "the state gate")):
        extra_us = cost[name] - cost["direct"]
        section.notes.append(
            f"In process, without the network, {what} costs {extra_us:.1f} µs per request (a "
            f"GET answered with the {len(body):,}-byte ladder: {cost[name]:.1f} µs through it "
            f"against {cost['direct']:.1f} µs direct, median of 5 batches of 20,000): "
            f"{extra_us / 1000 / without.median_ms * 100:.2f} % of the median latency with the "
            "journal off above."
        )
    return section


__all__ = ["bench_journal_overhead", "bench_state", "bench_suite_vs_restarts"]
