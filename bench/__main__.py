"""`just bench`: run the benchmarks and rewrite docs/performance.md.

python -m bench [--quick] [--only NAME ...] [--output PATH]
                [--soak-phases RATE:MINUTES ...] [--soak-state-dir DIR]

`soak-firm` (about 42 minutes) and `history` (a million RFQs at rest, about 5 minutes) run only
when named: `python -m bench --only soak-firm`, `python -m bench --only history`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from bench import (
    auth,
    console,
    feed,
    fills,
    firm_open,
    history,
    instances,
    processes,
    profile,
    proxy,
    ramp,
    rfq,
    shared_engine,
    soak,
    soak_firm,
    state,
    stream,
    v1_book,
    webhooks,
)
from bench.load import LoadResult, merge, percentile, run_load
from bench.report import Section, update, write
from bench.sim_api import open_limits

STARTUP_TARGET_S = 5.0
MEMORY_TARGET_MB = 150.0


def bench_startup(runs: int) -> Section:
    """`rfqsim serve` from process start to the ready file: both chains deployed and funded, the
    maker fleet online with its levels read and its first resting orders in the v1 book."""
    times: list[float] = []
    sim_rss: list[float] = []
    anvil_rss: list[float] = []
    orphans: list[int] = []
    load_before = os.getloadavg()[0]  # the machine is shared: say how busy it was
    for _ in range(runs):
        with processes.simulator() as started:
            times.append(started.seconds_to_ready)
            assert {c["chain_id"] for c in started.info["chains"]} == {56, 97}
            time.sleep(2.0)  # idle: let start-up garbage settle before reading memory
            sim_rss.append(processes.rss_mb(started.process.pid))
            children = processes.child_rss_mb(started.process.pid)
            anvil_rss.append(sum(children.values()))
            child_pids = list(children)
        time.sleep(0.2)
        orphans += processes.pids_alive(child_pids)
    median = statistics.median(times)
    section = Section(
        title="Start-up and idle memory",
        intro=(
            "`rfqsim serve` from process start until the ready file exists (both chains started, "
            "contracts deployed, wallets funded, the maker fleet in its own process online with "
            "its levels read by the server and its first resting orders in the v1 book: "
            f"decisions T9), {runs} runs; then resident memory after 2 s idle."
        ),
        header=("measure", "median", "p99 / max", "target", "met"),
    )
    section.rows.append(
        (
            "start-up to ready file",
            f"{median:.2f} s",
            f"{max(times):.2f} s",
            f"≤ {STARTUP_TARGET_S:.0f} s",
            "yes" if median <= STARTUP_TARGET_S else "no",
        )
    )
    section.rows.append(
        (
            "simulator process RSS (idle)",
            f"{statistics.median(sim_rss):.0f} MB",
            f"{max(sim_rss):.0f} MB",
            f"≤ {MEMORY_TARGET_MB:.0f} MB",
            "yes" if statistics.median(sim_rss) <= MEMORY_TARGET_MB else "no",
        )
    )
    section.rows.append(
        (
            "Anvil processes RSS (both chains, reported separately)",
            f"{statistics.median(anvil_rss):.0f} MB",
            f"{max(anvil_rss):.0f} MB",
            "—",
            "—",
        )
    )
    section.notes.append(
        f"Anvil processes still alive after the simulator stopped: {len(orphans)} (must be 0)."
    )
    section.notes.append(f"Load average (1 min) of the machine before the run: {load_before:.2f}.")
    return section


def bench_http_baseline(seconds: float, concurrency: int, rounds: int) -> Section:
    """GET /v2/health on the simulator (middleware, request ids, envelope) against a bare aiohttp
    JSON handler, same load generator, same run."""
    baseline_runs: list[LoadResult] = []
    our_runs: list[LoadResult] = []
    with processes.baseline_server() as base_url, processes.simulator() as started:
        api = started.info["api_url"]
        open_limits(api)  # the IP backstop (600/min) would otherwise answer 429s
        for _ in range(rounds):  # interleaved, so drift on the machine hits both alike
            baseline_runs.append(
                asyncio.run(
                    run_load(f"{base_url}/v2/health", concurrency=concurrency, seconds=seconds)
                )
            )
            our_runs.append(
                asyncio.run(run_load(f"{api}/v2/health", concurrency=concurrency, seconds=seconds))
            )
    baseline = merge(baseline_runs)
    ours = merge(our_runs)
    section = Section(
        title="HTTP baseline: GET /v2/health",
        intro=(
            f"Closed loop, {concurrency} concurrent connections, {rounds} interleaved rounds of "
            f"{seconds:.0f} s per server, exact latencies over all rounds. Baseline: a bare "
            "aiohttp JSON handler with no middleware, in its own process like the simulator."
        ),
        header=("server", "requests/s", "median ms", "p99 ms", "errors", "throughput ratio"),
    )
    for name, result in (
        ("bare aiohttp handler (baseline)", baseline),
        ("rfqsim /v2/health", ours),
    ):
        section.rows.append(
            (
                name,
                f"{result.throughput:.0f}",
                f"{result.median_ms:.2f}",
                f"{percentile(result.latencies_ms, 99):.2f}",
                str(result.errors),
                f"{result.throughput / baseline.throughput:.2f}",
            )
        )
    return section


BENCHMARKS = (
    "startup",
    "http",
    "auth",
    "profile",
    "firm",
    "budget",
    "open",
    "budget_load",
    "ladder",
    "fills",
    "webhooks",
    "ramp",
    "feed",
    "soak",
    "stop",
    "v1",
    "state",
    "suite",
    "journal",
    "console",
    "stream",
    "proxy",
    "engine",
    "instances",
    "soak-firm",
    "history",
)
# Run only when named with --only: 40 minutes of load is not part of a routine `just bench`.
ON_REQUEST = ("soak-firm", "history")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="fewer runs, shorter loads")
    parser.add_argument("--only", nargs="*", choices=BENCHMARKS)
    parser.add_argument("--output", default="docs/performance.md")
    parser.add_argument(
        "--soak-phases",
        nargs="+",
        type=soak_firm.parse_phase,
        metavar="RATE:MINUTES",
        help="soak-firm's phases (default 100:30 200:10; --quick 100:3 200:2)",
    )
    parser.add_argument(
        "--soak-state-dir",
        type=Path,
        help="soak-firm: run the simulator with --state-dir DIR and report what DIR holds",
    )
    args = parser.parse_args()
    selected = args.only or [name for name in BENCHMARKS if name not in ON_REQUEST]
    sections: list[Section] = []
    if "startup" in selected:
        sections.append(bench_startup(runs=2 if args.quick else 5))
    if "http" in selected:
        sections.append(
            bench_http_baseline(
                seconds=2 if args.quick else 5, concurrency=20, rounds=2 if args.quick else 3
            )
        )
    if "auth" in selected:
        sections.append(auth.bench_auth(iterations=500 if args.quick else 3000))
        sections.append(auth.bench_auth_http(seconds=2 if args.quick else 5))
    if "profile" in selected:
        sections.append(profile.bench_profile(rate=100, seconds=6 if args.quick else 16))
    if "firm" in selected:
        sections.append(
            rfq.bench_firm_quotes(seconds=5 if args.quick else 15, concurrencies=(1, 10, 50))
        )
    if "budget" in selected:
        sections.append(rfq.bench_reply_budget(requests=20 if args.quick else 60))
    if "open" in selected:
        sections.append(
            firm_open.bench_firm_open_loop(rates=(50, 100, 200), seconds=5 if args.quick else 10)
        )
    if "engine" in selected:
        sections.append(
            shared_engine.bench_shared_engine(rates=(100, 200), seconds=5 if args.quick else 10)
        )
    if "instances" in selected:
        sections.append(
            instances.bench_instances(
                rates=(100, 200, 300, 400) if not args.quick else (100, 200),
                seconds=5 if args.quick else 10,
            )
        )
    if "budget_load" in selected:
        sections.append(firm_open.bench_budget_open_loop(rate=100, seconds=5 if args.quick else 10))
    if "ladder" in selected:
        sections.append(
            rfq.bench_levels_preview(
                seconds=2 if args.quick else 5, concurrency=20, rounds=2 if args.quick else 3
            )
        )
    if "fills" in selected:
        sections.append(fills.bench_fill_reconciliation(fills=10 if args.quick else 50))
    if "webhooks" in selected:
        sections.append(
            webhooks.bench_webhooks(
                paced=200 if args.quick else 1000, rate=100, burst=500 if args.quick else 3000
            )
        )
    if "ramp" in selected:
        sections.append(
            ramp.bench_ramp(
                creates=20 if args.quick else 100,
                reads=100 if args.quick else 400,
                seconds=2 if args.quick else 5,
            )
        )
    if "feed" in selected:
        sections.append(
            feed.bench_feed(
                seconds=2 if args.quick else 5,
                concurrency=20,
                rounds=2 if args.quick else 3,
                trades=10_000,
                fills=20 if args.quick else 60,
            )
        )
    if "soak" in selected:
        sections.append(soak.bench_soak(minutes=2 if args.quick else 10))
    if "stop" in selected:
        sections.append(soak.bench_stop_latency(stops=5 if args.quick else 20))
    if "v1" in selected:
        sections += v1_book.bench_v1_book(
            seconds=2 if args.quick else 5,
            rounds=2 if args.quick else 3,
            concurrency=20,
            swaps=100 if args.quick else 300,
            fills=10 if args.quick else 50,
        )
    if "state" in selected:
        sections.append(
            state.bench_state(rounds=5 if args.quick else 20, starts=2 if args.quick else 3)
        )
    if "suite" in selected:
        sections.append(state.bench_suite_vs_restarts(restarts=2 if args.quick else 3, resets=20))
    if "journal" in selected:
        sections.append(
            state.bench_journal_overhead(
                seconds=2 if args.quick else 3, concurrency=20, rounds=2 if args.quick else 8
            )
        )
    if "console" in selected:
        sections.append(
            console.bench_console(
                rate=100, seconds=4 if args.quick else 8, rounds=2 if args.quick else 8
            )
        )
    if "stream" in selected:
        sections.append(
            stream.bench_stream(
                rate=20, seconds=4 if args.quick else 8, rounds=1 if args.quick else 3
            )
        )
    if "proxy" in selected:
        sections.append(proxy.bench_proxy(rate=100, seconds=5, rounds=2 if args.quick else 6))
    if "history" in selected:
        sections.append(
            history.bench_history(
                rows=100_000 if args.quick else 1_000_000, reads=100 if args.quick else 300
            )
        )
    if "soak-firm" in selected:
        phases = args.soak_phases or (soak_firm.QUICK_PHASES if args.quick else soak_firm.PHASES)
        sections += soak_firm.bench_soak_firm(tuple(phases), args.soak_state_dir)
    command = "just bench" + (" --quick" if args.quick else "")
    if args.only:
        # A partial run replaces its own sections and keeps the others' figures.
        command = "python -m bench --only " + " ".join(args.only)
        command += " --quick" if args.quick else ""
        if args.soak_phases and "soak-firm" in selected:  # the stamp says which run it was
            phases = (f"{rate:g}:{minutes:g}" for rate, minutes in args.soak_phases)
            command += " --soak-phases " + " ".join(phases)
        update(Path(args.output), sections, command)
    else:
        # The sections run only on request keep the figures of the run that measured them.
        write(Path(args.output), sections, command, keep=(*soak_firm.TITLES, history.TITLE))
    print(Path(args.output).read_text())


if __name__ == "__main__":
    main()
