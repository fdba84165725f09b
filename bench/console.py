"""What the console costs on the firm-quote path: firm quotes at 100/s offered, open loop, with
no page open and with one page open (a reader of GET /_sim/stream subscribed to everything,
which is what an open console page asks for, in a process of its own as a browser would be),
side by side in one run on one simulator, in interleaved rounds so the shared machine's drift
falls on both alike. Also, in process: what recording one RFQ's timeline costs, and a
change-feed mark with nobody subscribed.

    python -m bench.console --read URL FILE   the page's reader (the bench starts it)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench import processes
from bench.firm_open import FirmLoad, cpu_seconds
from bench.load import percentile
from bench.open_loop import OpenLoopResult
from bench.report import Section
from bench.sim_api import FAST_MAKERS
from simulator.services.rfq.history import RFQ_STEPS, RfqHistory
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.timelines import Timelines

TARGET_RATIO = 1.10  # p99 with one page open at most 10 % above the no-page p99


def _note(counts: Path, events: int, received: int) -> None:
    """Replaced whole, so the bench never reads half a note of a reader it stopped."""
    fresh = counts.with_suffix(".new")
    fresh.write_text(f"{events} {received}")
    fresh.replace(counts)


async def _read_stream(url: str, counts: Path) -> None:
    """Read the live stream until killed; after each chunk, write `events bytes` to `counts`."""
    events = received = 0
    async with aiohttp.ClientSession() as session, session.get(f"{url}/_sim/stream") as response:
        assert response.status == 200, response.status
        async for chunk in response.content.iter_any():
            events += chunk.count(b"\nevent: ") + chunk.startswith(b"event: ")
            received += len(chunk)
            _note(counts, events, received)


class StreamReader:
    """One open console page: a process reading the live stream while it runs."""

    def __init__(self, api: str, counts: Path) -> None:
        self.api = api
        self.counts = counts
        self.events = 0
        self.bytes = 0
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Opens the page and returns once its stream said hello (the first chunk)."""
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.console", "--read", self.api, str(self.counts)]
        )
        deadline = time.monotonic() + 30
        while not self.counts.exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the page's stream reader did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
        if self.counts.exists():
            events, received = (int(x) for x in self.counts.read_text().split())
            self.events += events
            self.bytes += received
            self.counts.unlink()


async def _rounds(
    api: str,
    info: dict[str, Any],
    pid: int,
    rate: float,
    seconds: float,
    rounds: int,
    counts: Path,
) -> tuple[OpenLoopResult, OpenLoopResult, StreamReader, dict[bool, float]]:
    none = OpenLoopResult(offered_rate=rate, seconds=0.0)
    page = OpenLoopResult(offered_rate=rate, seconds=0.0)
    cpu: dict[bool, float] = {False: 0.0, True: 0.0}  # the simulator's CPU seconds, by page
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        load = FirmLoad(api, info)
        await load.prepare(session)
        reader = StreamReader(api, counts)
        for index in range(rounds * 2):
            # none, page, page, none, ...: the heap grows over the run (RFQ records are kept),
            # so neither condition always comes second
            with_page = index % 4 in (1, 2)
            if with_page:
                await asyncio.to_thread(reader.start)
            before = cpu_seconds(pid)
            result = await load.run(session, rate=rate, seconds=seconds)
            cpu[with_page] += cpu_seconds(pid) - before
            if with_page:
                reader.stop()
            target = page if with_page else none
            target.latencies_ms += result.latencies_ms
            target.maker_wait_ms += result.maker_wait_ms
            target.inside_ms += result.inside_ms
            target.seconds += result.seconds
            for outcome, count in result.outcomes.items():
                target.outcomes[outcome] = target.outcomes.get(outcome, 0) + count
            await asyncio.sleep(1.0)  # stragglers and sweeps settle between rounds
    return none, page, reader, cpu


def _recording_cost(rfqs: int = 20_000) -> tuple[float, float]:
    """µs to record one four-maker RFQ's timeline (received, 4 asks, 4 answers, selection,
    response), and µs per change-feed mark with nobody subscribed."""
    changes = ChangeFeed()
    history = RfqHistory(
        Timelines("rfqs", time.time, RFQ_STEPS, capacity=10_000, changes=changes.mark)
    )
    wallets = [f"0x{i:040x}" for i in range(4)]
    started = time.perf_counter()
    for n in range(rfqs):
        rfq_id = f"rfq_{n}"
        history.received(
            rfq_id,
            caller="key:tx_test_0",
            chain_id=97,
            sell_token=wallets[0],
            buy_token=wallets[1],
            sell_amount=10,
            buy_amount=None,
            taker=wallets[2],
            preferred=[],
            restricted=[],
            reply_budget_ms=750,
            head_start_ms=250,
        )
        for wallet in wallets:
            history.asked(rfq_id, wallet, "tx_test_m", "mq_1", "open", False)
        for wallet in wallets:
            history.answered(rfq_id, wallet, "tx_test_m", "mq_1", "quoted", 1.5)
        history.selected(rfq_id, "single", [wallets[0]], [[w, "worse_price"] for w in wallets[1:]])
        history.responded(rfq_id, "quoted", None, 3.0, 60.0)
    per_rfq = (time.perf_counter() - started) / rfqs * 1e6
    marks = 1_000_000
    started = time.perf_counter()
    for _ in range(marks):
        changes.mark("rfqs", "rfq_1")
    per_mark = (time.perf_counter() - started) / marks * 1e6
    return per_rfq, per_mark


def bench_console(rate: float, seconds: float, rounds: int) -> Section:
    load_before = os.getloadavg()[0]
    with (
        processes.simulator("--config", str(FAST_MAKERS)) as started,
        tempfile.TemporaryDirectory() as tmp,
    ):
        none, page, reader, cpu = asyncio.run(
            _rounds(
                started.info["api_url"],
                started.info,
                started.process.pid,
                rate,
                seconds,
                rounds,
                Path(tmp) / "page",
            )
        )
    per_rfq_us, per_mark_us = _recording_cost()
    section = Section(
        title="Console cost: firm quotes with no page open and with one page open",
        intro=(
            f"One simulator as `rfqsim serve` runs it (the maker fleet in a process of its own; "
            f"four makers answering after 1 ms); firm "
            f"quotes offered at {rate:.0f}/s, open loop, in {rounds * 2} interleaved rounds of "
            f"{seconds:.0f} s in the order none, page, page, none, ...: no page open, or one page "
            "open (a reader of GET /_sim/stream subscribed to every topic, as an open console "
            "page is). Target: the p99 "
            "with one page open within 10 % of the p99 with none."
        ),
        header=(
            "console",
            "answers",
            "achieved/s",
            "p50 ms",
            "p99 ms",
            "added p99 ms",
            "simulator CPU/answer ms",
            "outcomes",
        ),
    )
    for label, result, open_page in (("no page open", none, False), ("one page open", page, True)):
        answers = max(1, len(result.latencies_ms))
        section.rows.append(
            (
                label,
                str(len(result.latencies_ms)),
                f"{result.achieved_rate:.0f}",
                f"{result.pct(50):.1f}",
                f"{result.pct(99):.1f}",
                f"{percentile(result.added_ms, 99):.1f}" if result.added_ms else "—",
                f"{cpu[open_page] * 1000 / answers:.2f}",
                ", ".join(f"{k}: {v}" for k, v in sorted(result.outcomes.items())),
            )
        )
    none_cpu = cpu[False] * 1000 / max(1, len(none.latencies_ms))
    page_cpu = cpu[True] * 1000 / max(1, len(page.latencies_ms))
    cpu_change = (page_cpu - none_cpu) / none_cpu * 100 if none_cpu else 0.0
    ratio = page.pct(99) / none.pct(99) if none.pct(99) else float("inf")
    met = "met" if ratio <= TARGET_RATIO else "NOT met"
    if min(none.achieved_rate, page.achieved_rate) < 0.95 * rate:
        # Saturated: latencies are queueing on a machine the run does not have to itself.
        met = "not established: the simulator did not keep up with the offered rate"
    section.notes += [
        f"p99 with one page open / p99 with none: {ratio:.2f} (target ≤ {TARGET_RATIO:.2f}: "
        f"{met}). The page received {reader.events} events ({reader.bytes / 1024:.0f} KiB).",
        "Simulator CPU per answer with one page open against none: "
        f"{page_cpu - none_cpu:+.2f} ms ({cpu_change:+.1f} %); "
        "comparable only when both conditions answered the same mix of outcomes.",
        f"In process: recording one four-maker RFQ's timeline costs {per_rfq_us:.1f} µs; a "
        f"change-feed mark with nobody subscribed {per_mark_us:.3f} µs.",
        f"Load average (1 min) of the machine before the run: {load_before:.2f}.",
    ]
    return section


__all__ = ["bench_console"]

if __name__ == "__main__" and sys.argv[1:2] == ["--read"]:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_read_stream(sys.argv[2], Path(sys.argv[3])))
