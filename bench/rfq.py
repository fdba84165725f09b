"""RFQ quote benchmarks against a simulator with fast makers: firm quotes under concurrency
(``POST /v2/rfq/request``, quotes per second and latency per number of concurrent takers),
reply-budget adherence with one maker slower than the budget, and the throughput of the price
ladder and the preview against a bare aiohttp baseline in the same run. The fill
reconciliation delay is in ``fills.py``, the cost of the auth layer in ``auth.py``."""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

import aiohttp
from eth_account.messages import encode_typed_data

from bench import processes
from bench.load import LoadResult, closed_loop, merge, percentile, run_load
from bench.report import Section
from bench.sim_api import (
    FAST_MAKERS,
    call_json,
    open_limits,
    setup_bench_key,
    slow_down_maker,
    token_address,
)


async def _firm_load(
    api: str, info: dict[str, Any], *, concurrency: int, seconds: float
) -> tuple[list[float], dict[str, int]]:
    body = {
        "chainId": 97,
        "sellToken": token_address(info, 97, "USDT"),
        "buyToken": token_address(info, 97, "NGNS"),
        "sellAmount": str(10**17),
    }
    latencies: list[float] = []
    outcomes: dict[str, int] = {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        key = await setup_bench_key(session, api)
        headers = {"Authorization": f"Bearer {key}"}
        takers = [w["address"] for w in info["demo_wallets"]]
        stop_at = time.perf_counter() + seconds

        async def taker(index: int) -> None:
            request = dict(body, taker=takers[index % len(takers)])
            started = time.perf_counter()
            async with session.post(f"{api}/v2/rfq/request", json=request, headers=headers) as resp:
                payload = await resp.json()
            latencies.append((time.perf_counter() - started) * 1000)
            label = payload["data"]["status"] if resp.status == 200 else f"http {resp.status}"
            outcomes[label] = outcomes.get(label, 0) + 1

        await closed_loop(concurrency, taker, done=lambda: time.perf_counter() >= stop_at)
    return latencies, outcomes


def bench_firm_quotes(seconds: float, concurrencies: tuple[int, ...]) -> Section:
    section = Section(
        title="Firm quotes: POST /v2/rfq/request with makers replying at once",
        intro=(
            f"Closed loop, keyed takers with proof of funds on, {seconds:.0f} s per row, against "
            "four in-process makers answering after 1 ms; every quote is a real signed order "
            "checked on chain (signature, balance, allowance, nonce). Load generator, simulator, "
            "its makers and Anvil share the 2 cores. Targets: >= 200 quotes/s, p99 <= 50 ms at "
            "50 concurrent takers (a closed loop of 50 takers at 200/s has a 250 ms mean latency "
            "by Little's law, so each target is read at the concurrency that can meet it)."
        ),
        header=("concurrent takers", "quotes/s", "median ms", "p99 ms", "outcomes"),
    )
    for concurrency in concurrencies:
        with processes.simulator("--config", str(FAST_MAKERS)) as started:
            began = time.perf_counter()
            latencies, outcomes = asyncio.run(
                _firm_load(
                    started.info["api_url"], started.info, concurrency=concurrency, seconds=seconds
                )
            )
            elapsed = time.perf_counter() - began
        section.rows.append(
            (
                str(concurrency),
                f"{len(latencies) / elapsed:.0f}",
                f"{statistics.median(latencies):.1f}",
                f"{percentile(latencies, 99):.1f}",
                ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())),
            )
        )
    return section


async def _budget_run(api: str, info: dict[str, Any], requests: int) -> tuple[list[float], int]:
    body = {
        "chainId": 97,
        "sellToken": token_address(info, 97, "USDT"),
        "buyToken": token_address(info, 97, "NGNS"),
        "sellAmount": str(10**17),
        "taker": info["demo_wallets"][0]["address"],
    }
    async with aiohttp.ClientSession() as session:
        key = await setup_bench_key(session, api)
        await slow_down_maker(session, api, "delta", 1500)
        latencies: list[float] = []
        slow_included = 0
        delta = next(m["address"] for m in info["maker_wallets"] if m["label"] == "maker-3")
        for _ in range(requests):
            started = time.perf_counter()
            payload = await call_json(
                session,
                "POST",
                f"{api}/v2/rfq/request",
                json=body,
                headers={"Authorization": f"Bearer {key}"},
            )
            latencies.append((time.perf_counter() - started) * 1000)
            orders = payload["data"].get("quote", {}).get("orders", [])
            slow_included += sum(1 for o in orders if o["maker"] == delta)
    return latencies, slow_included


def bench_reply_budget(requests: int) -> Section:
    with processes.simulator("--config", str(FAST_MAKERS)) as started:
        latencies, slow_included = asyncio.run(
            _budget_run(started.info["api_url"], started.info, requests)
        )
    budget = 750.0
    over = [ms - budget for ms in latencies]
    section = Section(
        title="Reply budget with one maker slower than the budget",
        intro=(
            f"{requests} sequential firm requests; maker delta answers after 1,500 ms, the other "
            "three after 1 ms; corridor reply budget 750 ms."
        ),
        header=("measure", "value", "target"),
    )
    section.rows += [
        ("median answer time", f"{statistics.median(latencies):.1f} ms", "—"),
        ("p99 answer time minus budget", f"{percentile(over, 99):+.1f} ms", "≤ +30 ms"),
        ("quotes containing the slow maker", str(slow_included), "0"),
    ]
    return section


def bench_levels_preview(seconds: float, concurrency: int, rounds: int) -> Section:
    base_runs: list[LoadResult] = []
    level_runs: list[LoadResult] = []
    preview_runs: list[LoadResult] = []
    with (
        processes.baseline_server() as base_url,
        processes.simulator("--config", str(FAST_MAKERS)) as started,
    ):
        api = started.info["api_url"]
        open_limits(api)
        body = {
            "chainId": 97,
            "sellToken": token_address(started.info, 97, "USDT"),
            "buyToken": token_address(started.info, 97, "NGNS"),
            "sellAmount": str(10**18),
        }
        for _ in range(rounds):
            base_runs.append(
                asyncio.run(
                    run_load(f"{base_url}/v2/health", concurrency=concurrency, seconds=seconds)
                )
            )
            level_runs.append(
                asyncio.run(
                    run_load(
                        f"{api}/v2/rfq/levels?chainId=97", concurrency=concurrency, seconds=seconds
                    )
                )
            )
            preview_runs.append(
                asyncio.run(
                    run_load(
                        f"{api}/v2/rfq/preview",
                        concurrency=concurrency,
                        seconds=seconds,
                        json_body=body,
                    )
                )
            )
    baseline, levels, preview = merge(base_runs), merge(level_runs), merge(preview_runs)
    section = Section(
        title="Price ladder and preview throughput",
        intro=(
            f"Closed loop, {concurrency} connections, {rounds} interleaved rounds of "
            f"{seconds:.0f} s; baseline: the bare aiohttp JSON handler in the same run."
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
        ("GET /v2/rfq/levels", levels, "≥ 0.6"),
        ("POST /v2/rfq/preview", preview, "≥ 0.3"),
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
    return section


__all__ = ["encode_typed_data"]
