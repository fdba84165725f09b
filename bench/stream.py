"""What readers of the live stream cost the venue: firm quotes at 20/s offered, open loop, and
GET /v2/health probed 10 times a second, with no reader of GET /_sim/stream and with 200 readers
(half of them reading everything, half connected and never reading, as a stalled tab is), in
interleaved rounds on one simulator `rfqsim serve` runs with its default maker fleet. The readers
live in a process of their own, as browsers would. The reader cap is raised to 256 for the run
(setting stream.max_subscribers; the default, 64, would refuse most of the 200).

    python -m bench.stream --readers URL READING IDLE FILE   the readers (the bench starts them)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
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
from bench.sim_api import open_limits

READERS = 200
READER_CAP = 256  # stream.max_subscribers for the run
QUOTED_TARGET = 0.99  # firm quotes still quoted with the readers on
P50_TARGET_RATIO = 1.2  # their p50 against the p50 with no reader
HEALTH_EVERY_S = 0.1
READERS_NICE = 10


def _write(note: Path, text: str) -> None:
    """Replaced whole, so the bench never reads half a note."""
    fresh = note.with_suffix(".new")
    fresh.write_text(text)
    fresh.replace(note)


async def _readers(url: str, reading: int, idle: int, note: Path) -> None:
    """Open the readers, write `ready` to `note` once each has its hello, and on SIGTERM write
    `events bytes ended` (ended: connections the server closed while they were open)."""
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    counts = {"events": 0, "bytes": 0, "ended": 0}
    hellos = asyncio.Semaphore(0)
    host, port = url.removeprefix("http://").rsplit(":", 1)

    async def read(session: aiohttp.ClientSession) -> None:
        async with session.get(f"{url}/_sim/stream") as response:
            assert response.status == 200, response.status
            first = True
            async for chunk in response.content.iter_any():
                counts["events"] += chunk.count(b"event: ")
                counts["bytes"] += len(chunk)
                if first:
                    hellos.release()
                    first = False
        counts["ended"] += 1

    async def stall() -> asyncio.StreamWriter:
        # A small buffer limit: once it holds a few KiB, the transport stops reading.
        reader, writer = await asyncio.open_connection(host, int(port), limit=4096)
        writer.write(f"GET /_sim/stream HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        await reader.readuntil(b"event: hello")
        hellos.release()
        return writer

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        tasks = [asyncio.create_task(read(session)) for _ in range(reading)]
        stalled = await asyncio.gather(*(stall() for _ in range(idle)))
        for _ in range(reading + idle):
            await hellos.acquire()
        await asyncio.to_thread(_write, note, "ready")
        await stop.wait()
        for task in tasks:
            task.cancel()
        for writer in stalled:
            writer.close()
        await asyncio.to_thread(
            _write, note, f"{counts['events']} {counts['bytes']} {counts['ended']}"
        )


class Readers:
    """The 200 readers in a process of their own, for one round."""

    def __init__(self, api: str, note: Path) -> None:
        self.api = api
        self.note = note
        self.events = self.bytes = self.ended = 0
        self.cpu_s = 0.0  # the readers' process, all rounds
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        reading = READERS // 2
        self.note.unlink(missing_ok=True)
        self._process = subprocess.Popen(
            [
                # Niced: on two shared cores the readers would otherwise take the CPU the
                # simulator needs, and the row would measure the load generator.
                *("nice", "-n", str(READERS_NICE)),
                *(sys.executable, "-m", "bench.stream", "--readers", self.api),
                *(str(reading), str(READERS - reading), str(self.note)),
            ]
        )
        deadline = time.monotonic() + 60
        while not (self.note.exists() and self.note.read_text() == "ready"):
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the stream readers did not all say hello")
            time.sleep(0.05)

    def stop(self) -> None:
        assert self._process is not None
        self.cpu_s += cpu_seconds(self._process.pid)
        self._process.send_signal(signal.SIGTERM)
        self._process.wait(timeout=30)
        events, received, ended = (int(x) for x in self.note.read_text().split())
        self.events += events
        self.bytes += received
        self.ended += ended


async def _health(session: aiohttp.ClientSession, api: str, until: float) -> list[float]:
    latencies: list[float] = []
    while time.monotonic() < until:
        started = time.perf_counter()
        async with session.get(f"{api}/v2/health") as response:
            await response.read()
        latencies.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(HEALTH_EVERY_S)
    return latencies


async def _rounds(
    api: str, info: dict[str, Any], pid: int, rate: float, seconds: float, rounds: int, tmp: Path
) -> tuple[
    dict[bool, OpenLoopResult],
    dict[bool, list[float]],
    Readers,
    dict[str, float],
    dict[bool, float],
]:
    firm = {False: OpenLoopResult(rate, 0.0), True: OpenLoopResult(rate, 0.0)}
    health: dict[bool, list[float]] = {False: [], True: []}
    rss = {"before": 0.0, "with": 0.0, "after": 0.0}
    cpu = {False: 0.0, True: 0.0}  # the simulator's CPU seconds per second of load
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        load = FirmLoad(api, info)
        await load.prepare(session)
        rss["before"] = processes.rss_mb(pid)
        readers = Readers(api, tmp / "readers")
        for index in range(rounds * 2):
            # none, readers, readers, none, ...: neither condition always comes second
            with_readers = index % 4 in (1, 2)
            if with_readers:
                await asyncio.to_thread(readers.start)
            before = cpu_seconds(pid)
            probes = asyncio.create_task(_health(session, api, time.monotonic() + seconds))
            result = await load.run(session, rate=rate, seconds=seconds)
            health[with_readers] += await probes
            cpu[with_readers] += (cpu_seconds(pid) - before) / (rounds * seconds)
            if with_readers:
                rss["with"] = max(rss["with"], processes.rss_mb(pid))
                await asyncio.to_thread(readers.stop)
            target = firm[with_readers]
            target.latencies_ms += result.latencies_ms
            target.seconds += result.seconds
            for outcome, count in result.outcomes.items():
                target.outcomes[outcome] = target.outcomes.get(outcome, 0) + count
            await asyncio.sleep(1.0)  # stragglers settle between rounds
        await asyncio.sleep(2.0)  # the readers' connections are gone; memory settles
        rss["after"] = processes.rss_mb(pid)
    return firm, health, readers, rss, cpu


def bench_stream(rate: float, seconds: float, rounds: int) -> Section:
    load_before = os.getloadavg()[0]
    env = {"RFQSIM_STREAM__MAX_SUBSCRIBERS": str(READER_CAP)}
    with processes.simulator(env=env) as started, tempfile.TemporaryDirectory() as tmp:
        api = started.info["api_url"]
        open_limits(api)  # the probes and the quotes come from one IP
        firm, health, readers, rss, cpu = asyncio.run(
            _rounds(api, started.info, started.process.pid, rate, seconds, rounds, Path(tmp))
        )
    section = Section(
        title="Live stream readers: firm quotes with none and with 200 readers",
        intro=(
            f"One simulator as `rfqsim serve` runs it (default maker fleet, in a process of its "
            f"own), reader cap raised to {READER_CAP}; firm quotes offered at {rate:.0f}/s, open "
            f"loop, and GET /v2/health every {HEALTH_EVERY_S * 1000:.0f} ms, in {rounds * 2} "
            f"interleaved rounds of {seconds:.0f} s (none, readers, readers, none, ...): no "
            f"reader of GET /_sim/stream, or {READERS} readers ({READERS // 2} reading every "
            f"topic, {READERS - READERS // 2} connected and never reading) in a process of "
            f"their own, niced ({READERS_NICE}). Target: with the readers, at least "
            f"{QUOTED_TARGET:.0%} of firm quotes quoted and their p50 within "
            f"{P50_TARGET_RATIO} times the p50 with none."
        ),
        header=(
            "readers",
            "firm answers",
            "quoted",
            "firm p50 ms",
            "firm p99 ms",
            "health p50 ms",
            "health p99 ms",
            "outcomes",
        ),
    )
    for label, on in (("none", False), (f"{READERS}", True)):
        result = firm[on]
        answers = max(1, len(result.latencies_ms))
        section.rows.append(
            (
                label,
                str(len(result.latencies_ms)),
                f"{result.outcomes.get('quoted', 0) / answers:.1%}",
                f"{result.pct(50):.1f}",
                f"{result.pct(99):.1f}",
                f"{percentile(health[on], 50):.1f}",
                f"{percentile(health[on], 99):.1f}",
                ", ".join(f"{k}: {v}" for k, v in sorted(result.outcomes.items())),
            )
        )
    with_readers = firm[True]
    quoted = with_readers.outcomes.get("quoted", 0) / max(1, len(with_readers.latencies_ms))
    ratio = with_readers.pct(50) / firm[False].pct(50) if firm[False].pct(50) else float("inf")
    none = firm[False]
    quoted_none = none.outcomes.get("quoted", 0) / max(1, len(none.latencies_ms))
    verdict = "met" if quoted >= QUOTED_TARGET and ratio <= P50_TARGET_RATIO else "NOT met"
    if quoted_none < QUOTED_TARGET:
        # The machine could not serve the load even without readers: nothing to compare with.
        verdict = f"not established: only {quoted_none:.1%} quoted with no reader either"
    section.notes += [
        f"With {READERS} readers: {quoted:.1%} quoted (target ≥ {QUOTED_TARGET:.0%}); firm p50 "
        f"/ firm p50 with none: {ratio:.2f} (target ≤ {P50_TARGET_RATIO}): "
        f"{verdict}.",
        f"The reading readers received {readers.events} events ({readers.bytes / 2**20:.1f} MiB) "
        f"in all; connections the server closed under them: {readers.ended}.",
        f"Simulator CPU: {cpu[False]:.0%} of a core with no reader, {cpu[True]:.0%} with "
        f"{READERS} (the readers' own process not counted; it used "
        f"{readers.cpu_s / (rounds * seconds):.0%} of a core at nice {READERS_NICE}).",
        f"Simulator RSS: {rss['before']:.0f} MB before the first round, at most "
        f"{rss['with']:.0f} MB with the readers on, {rss['after']:.0f} MB 2 s after the last "
        "readers left.",
        f"Load average (1 min) of the machine before the run: {load_before:.2f}.",
    ]
    return section


__all__ = ["bench_stream"]

if __name__ == "__main__" and sys.argv[1:2] == ["--readers"]:
    with contextlib.suppress(KeyboardInterrupt):
        url, reading, idle, note = sys.argv[2:6]
        asyncio.run(_readers(url, int(reading), int(idle), Path(note)))
