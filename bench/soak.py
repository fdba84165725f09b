"""Soak and stop latency (reliability).

Soak: `rfqsim serve` under ten minutes of mixed load (workers cycling the price ladder, a
preview and a keyed firm request they cancel; a taker executing a real swap every second or so;
every quote's rfq.expired / rfq.filled event delivered to a local webhook receiver), with the
service clock advanced 25 h halfway, so everything of the first half passes the 24 h correction
window and the retention and must be forgotten. The simulator's resident memory is sampled all
along: at the start, at 5 min (before the advance), at the end, and after a minute idle.

Stop latency: `rfqsim serve` stopped with SIGTERM under load from 20 connections, again and
again; the time from the signal to the process's exit, and that no Anvil is left."""

from __future__ import annotations

import asyncio
import random
import signal
import statistics
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import psutil
from aiohttp import web

from bench import processes
from bench.mixed_load import MixedLoad, call, open_limits_and_key, token
from bench.report import Section
from rfqkit.chain import AnvilChain

ADVANCE_S = 25 * 3600  # past the 24 h correction window and the 1 h retention
STOP_TARGET_S = 3.0
GROWTH_TARGET = 0.10  # RSS at the end within 10 % of RSS at the half


@dataclass
class Soak:
    samples: list[tuple[float, float]] = field(default_factory=list)  # (elapsed s, RSS MB)
    counts: Counter[str] = field(default_factory=Counter)
    marks: dict[str, float] = field(default_factory=dict)  # label -> RSS MB


class Receiver:
    """A local webhook endpoint that acknowledges everything and counts deliveries."""

    def __init__(self) -> None:
        self.received = 0
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def _hook(self, request: web.Request) -> web.Response:
        await request.read()
        self.received += 1
        return web.Response(status=200)

    async def __aenter__(self) -> Receiver:
        app = web.Application()
        app.router.add_post("/hook", self._hook)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/hook"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


async def _swapper(
    api: str, info: dict[str, Any], key: str, stop: asyncio.Event, counts: Counter[str]
) -> None:
    """One taker executing real swaps: a firm quote, the approval once, the swap, its receipt."""
    chain_info = next(c for c in info["chains"] if c["chain_id"] == 97)
    wallet = info["demo_wallets"][2]
    chain = AnvilChain(97, chain_info["rpc_url"])
    body = {
        "chainId": 97,
        "sellToken": token(info, 97, "USDT"),
        "buyToken": token(info, 97, "NGNS"),
        "sellAmount": str(10**17),
        "taker": wallet["address"],
    }
    headers = {"Authorization": f"Bearer {key}"}
    try:
        async with aiohttp.ClientSession() as session:
            while not stop.is_set():
                try:
                    status, answer = await call(
                        session, "POST", f"{api}/v2/rfq/request", json=body, headers=headers
                    )
                    data = answer.get("data", {}) if status == 200 else {}
                    if data.get("status") != "quoted":
                        counts[f"swap quote {status} {data.get('status', '')}".strip()] += 1
                        await asyncio.sleep(1.0)
                        continue
                    transactions = data["transactions"]
                    # The approval is of exactly what the swap takes (the USDT-like token refuses
                    # a nonzero -> nonzero change), so every swap sends its own first.
                    approval = transactions["approval"]
                    tx = await chain.send_transaction(
                        wallet["private_key"],
                        to=approval["to"],
                        data=bytes.fromhex(approval["data"][2:]),
                        gas=200_000,
                    )
                    await chain.receipt(tx)
                    swap = transactions["swap"]
                    tx = await chain.send_transaction(
                        wallet["private_key"],
                        to=swap["to"],
                        data=bytes.fromhex(swap["data"][2:]),
                        gas=1_500_000,
                    )
                    receipt = await chain.receipt(tx)
                    counts[
                        "swap mined" if int(receipt["status"], 16) == 1 else "swap reverted"
                    ] += 1
                except (aiohttp.ClientError, OSError, TimeoutError, KeyError, ValueError) as exc:
                    counts[f"swap error {type(exc).__name__}"] += 1
                await asyncio.sleep(1.0)
    finally:
        await chain.close()


async def _soak(api: str, info: dict[str, Any], pid: int, minutes: float, workers: int) -> Soak:
    soak = Soak()
    process = psutil.Process(pid)

    def rss() -> float:
        return float(process.memory_info().rss) / 2**20

    async with Receiver() as receiver, aiohttp.ClientSession() as session:
        key = await open_limits_and_key(
            session,
            api,
            scopes=("trades:write", "trades:read", "webhooks:manage"),
            partner="soak",
        )
        status, created = await call(
            session,
            "POST",
            f"{api}/v1/webhooks",
            json={"url": receiver.url, "eventTypes": ["rfq.filled", "rfq.expired", "rfq.failed"]},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert status == 201, created
        load = MixedLoad(api, info, key)
        stop = asyncio.Event()
        began = time.monotonic()
        soak.marks["start"] = rss()

        async def sample() -> None:
            while not stop.is_set():
                soak.samples.append((time.monotonic() - began, rss()))
                await asyncio.sleep(10)

        tasks = [
            asyncio.create_task(load.run(workers, stop)),
            asyncio.create_task(_swapper(api, info, key, stop, soak.counts)),
            asyncio.create_task(sample()),
        ]
        half = minutes * 60 / 2
        await asyncio.sleep(half)
        soak.marks["half"] = rss()
        status, _ = await call(
            session, "POST", f"{api}/_sim/clock/advance", json={"seconds": ADVANCE_S}
        )
        assert status == 200
        await asyncio.sleep(60)
        soak.marks["after advance"] = rss()
        await asyncio.sleep(half - 60)
        soak.marks["end"] = rss()
        stop.set()
        await asyncio.gather(*tasks)
        await asyncio.sleep(60)
        soak.marks["idle"] = rss()
        soak.counts.update(load.counts)
        soak.counts["webhooks delivered"] = receiver.received
    return soak


def bench_soak(minutes: float = 10.0, workers: int = 8) -> Section:
    with processes.simulator("--allow-http-webhooks") as started:
        soak = asyncio.run(
            _soak(started.info["api_url"], started.info, started.process.pid, minutes, workers)
        )
    marks = soak.marks
    growth = (marks["end"] - marks["half"]) / marks["half"]
    section = Section(
        title="Soak: mixed load with the clock advanced 25 h halfway",
        intro=(
            f"{minutes:.0f} minutes against one `rfqsim serve --allow-http-webhooks`: {workers} "
            "clients cycling GET /v2/rfq/levels, POST /v2/rfq/preview and a keyed POST "
            "/v2/rfq/request cancelled when quoted; one taker executing a real swap about every "
            "second; every rfq.expired / rfq.filled event delivered to a local webhook "
            f"receiver. At {minutes / 2:.0f} min the service clock is advanced 25 h (past the "
            "24 h correction window and the 1 h retention: everything of the first half must be "
            "forgotten). Resident memory of the simulator process (Anvil not included). "
            "Targets: RSS at the end within 10 % of RSS at the half, and no growth across the "
            "window eviction."
        ),
        header=("moment", "RSS", "vs. at the half"),
    )
    for label, title in (
        ("start", "start of the load"),
        ("half", f"{minutes / 2:.0f} min (before the advance)"),
        ("after advance", "1 min after the 25 h advance"),
        ("end", f"{minutes:.0f} min (end of the load)"),
        ("idle", "after 60 s idle"),
    ):
        section.rows.append(
            (
                title,
                f"{marks[label]:.0f} MB",
                f"{(marks[label] - marks['half']) / marks['half'] * 100:+.1f} %",
            )
        )
    met = growth <= GROWTH_TARGET and marks["after advance"] <= marks["half"] * 1.02
    section.notes.append(
        f"Second half vs. first: {growth * 100:+.1f} % (target ≤ +10 %); "
        f"{'met' if met else 'not met'}."
    )
    trace = ", ".join(
        f"{int(t)} s {mb:.0f}" for t, mb in soak.samples[:: max(1, len(soak.samples) // 12)]
    )
    section.notes.append(f"RSS samples (MB): {trace}.")
    section.notes.append(
        "Requests: " + ", ".join(f"{k}: {v}" for k, v in sorted(soak.counts.items())) + "."
    )
    return section


async def _load_then_stop(
    process: subprocess.Popen[bytes], info: dict[str, Any], load_s: float
) -> float | None:
    api = info["api_url"]
    async with aiohttp.ClientSession() as session:
        key = await open_limits_and_key(session, api)
    load = MixedLoad(api, info, key)
    stop = asyncio.Event()
    workers = asyncio.create_task(load.run(20, stop))
    try:
        await asyncio.sleep(load_s)
        process.send_signal(signal.SIGTERM)
        began = time.monotonic()
        while process.poll() is None:
            if time.monotonic() - began > 30:
                return None
            await asyncio.sleep(0.005)
        return time.monotonic() - began
    finally:
        stop.set()
        await workers


def bench_stop_latency(stops: int = 20) -> Section:
    rng = random.Random(14)
    exits: list[float] = []
    hung = 0
    left: list[int] = []
    statuses: Counter[int] = Counter()
    for _ in range(stops):
        with processes.simulator() as started:
            anvils = [
                p
                for p in psutil.Process(started.process.pid).children(recursive=True)
                if "anvil" in p.name()
            ]
            exit_s = asyncio.run(
                _load_then_stop(started.process, started.info, rng.uniform(1.0, 3.0))
            )
            statuses[started.process.returncode] += 1
        if exit_s is None:
            hung += 1
        else:
            exits.append(exit_s)
        _, alive = psutil.wait_procs(anvils, timeout=5)
        left += [p.pid for p in alive]
    section = Section(
        title="Stop latency under load",
        intro=(
            f"{stops} times: `rfqsim serve` started, mixed load from 20 connections (ladder, "
            "preview, keyed firm request + cancel) for 1-3 s, then SIGTERM with the load still "
            "running; the time from the signal to the process's exit. Target: every stop ≤ 3 s."
        ),
        header=("stops", "median", "max", "target", "met"),
    )
    worst = max(exits) if exits else float("inf")
    section.rows.append(
        (
            str(stops),
            f"{statistics.median(exits):.2f} s" if exits else "—",
            f"{worst:.2f} s",
            f"≤ {STOP_TARGET_S:.0f} s",
            "yes" if not hung and worst <= STOP_TARGET_S else "no",
        )
    )
    section.notes.append(
        f"Hung (still running 30 s after the signal): {hung}; exit statuses: "
        + ", ".join(f"{code}: {n}" for code, n in sorted(statuses.items()))
        + f"; Anvil processes left: {len(left)}."
    )
    return section
