"""Soak, firm quotes: does the firm path hold a day, or only a burst? Open-loop firm requests
(bench/firm_open.py's load: keyed takers, four makers answering after 1 ms) at a steady rate for
a long time, then at a higher rate, read minute by minute: p50, p99, max, the simulator-added
p99 (Server-Timing `sim` - `makers`), the simulator's resident memory, the size of its store,
its longest collector pause (GET /_sim/runtime) and makers' late replies (GET /_sim/makers).

`python -m bench --only soak-firm` runs 100/s for 30 minutes and 200/s for 10 (`--quick`: 3 and
2; `--soak-phases RATE:MINUTES ...` for any other). The first phase is held to the steady
targets, the second to the burst targets (issue 33's numbers, below).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench import processes
from bench.firm_open import FirmLoad
from bench.load import percentile
from bench.open_loop import OpenLoopResult
from bench.report import Section
from bench.sim_api import FAST_MAKERS, call_json
from rfqkit.svg_chart import PALETTE, Series, lines
from rfqkit.timestamps import isoformat_unix, unix_seconds

PHASES = ((100.0, 30.0), (200.0, 10.0))  # (firm requests per second, minutes)
QUICK_PHASES = ((100.0, 3.0), (200.0, 2.0))
MINUTE_S = 60.0
STEADY_P99_MS = 50.0  # the steady phase's last minute, also within GROWTH_P99 of its first
GROWTH_P99 = 1.5
PAUSE_MS = 50.0  # no collector pause longer than this in the steady phase
RSS_MINUTE = 5  # memory flat after the first minutes: the last within RSS_GROWTH of this one
RSS_GROWTH = 1.2
BURST_P99_MS = 100.0
QUOTED = "quoted"
READ_TIMEOUT = aiohttp.ClientTimeout(total=20)  # a minute's reads must not hold up the next
PER_MINUTE, TARGETS = "Soak, firm quotes: per minute", "Soak, firm quotes: targets"
TITLES = (PER_MINUTE, TARGETS)  # docs/performance.md keeps them when a `just bench` skips this


@dataclass
class Sample:
    """The simulator process read at the end of one minute; None where the read got no answer
    (an overloaded simulator), or for the pauses a minute without a collection."""

    rss_mb: float | None
    store_bytes: int | None  # the history file on disk (GET /_sim/runtime); None: not read
    in_memory: int | None  # RFQ records in memory (the rest are in the history file)
    pause_ms: float | None  # the minute's longest collector pause
    pause_cpu_ms: float | None  # the most CPU one full collection of the minute used
    late_total: int | None  # makers' late replies counted so far (since the last reset)


@dataclass
class Minute:
    rate: float
    minute: int  # 1-based, within its phase
    result: OpenLoopResult  # the requests scheduled in this minute
    sample: Sample
    late: int | None  # late replies counted in this minute (None: not read)

    @property
    def all_quoted(self) -> bool:
        return set(self.result.outcomes) <= {QUOTED}

    @property
    def added_p99(self) -> float | None:
        added = self.result.added_ms
        return percentile(added, 99) if added else None


def per_minute(
    result: OpenLoopResult, samples: list[Sample], late_before: int, minute_s: float = MINUTE_S
) -> list[Minute]:
    """One open-loop run cut into the minutes the samples were taken at, by when each request
    was scheduled (so a minute's slow answers stay in the minute that caused them)."""
    began = min(result.scheduled_s)
    minutes = []
    late_seen = late_before
    for index, sample in enumerate(samples):
        start = began + index * minute_s
        part = result.window(start, start + minute_s)
        total = sample.late_total
        # A minute not read: the next read's count covers it.
        late = None if total is None else total - late_seen
        minutes.append(Minute(result.offered_rate, index + 1, part, sample, late))
        late_seen = late_seen if total is None else total
    return minutes


def longest_pause(
    seconds: list[dict[str, Any]], start: float, end: float
) -> tuple[float | None, float | None]:
    """The longest pause (wall time) and the most CPU one collection used, of GET
    /_sim/runtime's per-second list within [start, end) (Unix s); None without a collection."""
    # A second that starts just before `start` overlaps the minute.
    inside = [s for s in seconds if start - 1 < unix_seconds(s["at"]) < end]
    return (
        max((float(s["pause_longest_ms"]) for s in inside), default=None),
        max(
            (
                float(s["pause_longest_cpu_ms"])
                for s in inside
                if s["pause_longest_cpu_ms"] is not None
            ),
            default=None,
        ),
    )


def late_replies(makers: dict[str, Any]) -> int:
    """Late replies of the whole fleet as the venue counted them (GET /_sim/makers)."""
    return sum(int(m["replies"]["counts"].get("late", 0)) for m in makers["fleet"])


async def _sample(session: aiohttp.ClientSession, api: str, start: float, end: float) -> Sample:
    try:
        runtime = await call_json(
            session,
            "GET",
            f"{api}/_sim/runtime",
            params={"since": isoformat_unix(start)},
            timeout=READ_TIMEOUT,
        )
        makers = await call_json(session, "GET", f"{api}/_sim/makers", timeout=READ_TIMEOUT)
    except (aiohttp.ClientError, TimeoutError):
        return Sample(None, None, None, None, None, None)
    pause_ms, pause_cpu_ms = longest_pause(runtime["data"]["gc"]["seconds"], start, end)
    return Sample(
        rss_mb=runtime["data"]["rss_bytes"] / 2**20,
        store_bytes=runtime["data"]["store"]["file_bytes"],
        in_memory=runtime["data"]["store"]["rfqs_in_memory"],
        pause_ms=pause_ms,
        pause_cpu_ms=pause_cpu_ms,
        late_total=late_replies(makers["data"]),
    )


async def _phase(
    session: aiohttp.ClientSession,
    load: FirmLoad,
    rate: float,
    minutes: int,
) -> list[Minute]:
    late_before = late_replies((await call_json(session, "GET", f"{load.api}/_sim/makers"))["data"])
    wall, began = time.time(), time.perf_counter()

    async def sampler() -> list[Sample]:
        samples = []
        for k in range(1, minutes + 1):
            await asyncio.sleep(max(0.0, began + k * MINUTE_S - time.perf_counter()))
            start = wall + (k - 1) * MINUTE_S
            samples.append(await _sample(session, load.api, start, start + MINUTE_S))
        return samples

    sampling = asyncio.create_task(sampler())
    result = await load.run(session, rate=rate, seconds=minutes * MINUTE_S, failures_counted=True)
    return per_minute(result, await sampling, late_before)


async def _soak(
    api: str, info: dict[str, Any], phases: tuple[tuple[float, float], ...]
) -> list[list[Minute]]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        load = FirmLoad(api, info)
        await load.prepare(session)
        return [await _phase(session, load, rate, round(minutes)) for rate, minutes in phases]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _store(minute: Minute) -> str:
    size, records = minute.sample.store_bytes, minute.sample.in_memory
    if size is None or records is None:
        return "—"
    return f"{size / 2**20:.1f} MB ({records:,} in memory)"


def _misses(minute: Minute, steady: bool) -> list[str]:
    if steady:
        misses = ["p99"] if minute.result.pct(99) > STEADY_P99_MS else []
        if (minute.sample.pause_ms or 0.0) > PAUSE_MS:
            misses.append("pause")
        if minute.late is None:
            misses.append("not read")
        elif minute.late:
            misses.append("late")
        return misses
    misses = ["p99"] if minute.result.pct(99) > BURST_P99_MS else []
    return misses + ([] if minute.all_quoted else ["unanswered"])


def _minute_row(minute: Minute, steady: bool) -> tuple[str, ...]:
    result = minute.result
    misses = _misses(minute, steady)
    return (
        f"{minute.rate:.0f}",
        str(minute.minute),
        ", ".join(f"{k}: {v}" for k, v in sorted(result.outcomes.items())),
        f"{result.pct(50):.1f}",
        f"{result.pct(99):.1f}",
        f"{max(result.latencies_ms):.1f}",
        _ms(minute.added_p99),
        "—" if minute.sample.rss_mb is None else f"{minute.sample.rss_mb:.0f}",
        _store(minute),
        f"{_ms(minute.sample.pause_ms)} ({_ms(minute.sample.pause_cpu_ms)})",
        "—" if minute.late is None else str(minute.late),
        "yes" if not misses else "no: " + ", ".join(misses),
    )


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def _targets(steady: list[Minute], burst: list[Minute]) -> list[tuple[str, ...]]:
    first, last = steady[0].result.pct(99), steady[-1].result.pct(99)
    pause = max((m.sample.pause_ms or 0.0 for m in steady), default=0.0)
    late = sum(m.late or 0 for m in steady)
    # A minute whose reads got no answer (late is None) proves nothing about pauses or late.
    unread = sum(m.late is None for m in steady)
    not_read = f" ({unread} minutes not read)" if unread else ""
    rate = f"{steady[0].rate:.0f}/s"
    rows: list[tuple[str, ...]] = [
        (
            f"{rate}: last minute's p99 within {GROWTH_P99:g}x the first's",
            f"{first:.1f} → {last:.1f} ms ({last / first:.2f}x)",
            _met(last <= GROWTH_P99 * first),
        ),
        (
            f"{rate}: last minute's p99 ≤ {STEADY_P99_MS:.0f} ms",
            f"{last:.1f} ms",
            _met(last <= STEADY_P99_MS),
        ),
        (
            f"{rate}: no collector pause over {PAUSE_MS:.0f} ms",
            f"longest {pause:.1f} ms{not_read}" if unread < len(steady) else "not read",
            _met(pause <= PAUSE_MS and not unread),
        ),
    ]
    fifth = steady[RSS_MINUTE - 1].sample.rss_mb if len(steady) >= RSS_MINUTE else None
    end = steady[-1].sample.rss_mb
    if fifth is not None and end is not None:
        rows.append(
            (
                f"{rate}: RSS of the last minute ≤ {RSS_GROWTH:g}x the {RSS_MINUTE}th's",
                f"{fifth:.0f} → {end:.0f} MB ({end / fifth:.2f}x)",
                _met(end <= RSS_GROWTH * fifth),
            )
        )
    else:
        rows.append(
            (
                f"{rate}: RSS of the last minute ≤ {RSS_GROWTH:g}x the {RSS_MINUTE}th's",
                f"not measured: the phase had {len(steady)} minutes"
                if len(steady) < RSS_MINUTE
                else "not measured: the simulator did not answer the read",
                "—",
            )
        )
    rows.append(
        (
            f"{rate}: 0 late replies from makers",
            f"{late}{not_read}",
            _met(late == 0 and not unread),
        )
    )
    if burst:
        whole = OpenLoopResult(offered_rate=burst[0].rate, seconds=0.0)
        for minute in burst:
            whole.latencies_ms += minute.result.latencies_ms
        unanswered = sum(n for m in burst for k, n in m.result.outcomes.items() if k != QUOTED)
        burst_rate = f"{burst[0].rate:.0f}/s"
        rows += [
            (
                f"{burst_rate}: all answered (quoted)",
                f"{len(whole.latencies_ms) - unanswered} of {len(whole.latencies_ms)}",
                _met(unanswered == 0),
            ),
            (
                f"{burst_rate}: p99 ≤ {BURST_P99_MS:.0f} ms",
                f"{whole.pct(99):.1f} ms",
                _met(whole.pct(99) <= BURST_P99_MS),
            ),
        ]
    return rows


def overload_note(measured: list[Minute]) -> str | None:
    """Say so when the simulator fell over: requests with no answer or a 5xx, minutes whose
    reads it did not answer. Then the rows are the backlog's answer times, not a curve."""
    failed = sum(
        n
        for m in measured
        for name, n in m.result.outcomes.items()
        if name.startswith(("failed:", "http 5"))
    )
    offered = sum(len(m.result.latencies_ms) for m in measured)
    unread = sum(m.sample.rss_mb is None for m in measured)
    if not failed and not unread:
        return None
    return (
        f"Overloaded: {failed} of {offered} requests got no answer or a 5xx, and the reads of "
        f"/_sim/runtime and /_sim/makers got no answer within 20 s in {unread} of "
        f"{len(measured)} minutes. Once behind, an open loop keeps offering while the "
        "simulator falls further behind, so these rows show a collapse (the backlog's answer "
        "times), not the curve the targets are about: run it on a machine with idle cores."
    )


def _latency_chart(measured: list[Minute]) -> str:
    """Per minute of the whole run: p99 and p50 of each phase, the simulator-added p99 and the
    longest collector pause, against the targets."""
    x = list(range(1, len(measured) + 1))
    series = []
    for index, rate in enumerate(dict.fromkeys(m.rate for m in measured)):
        color = PALETTE[index % 2]

        def points(key: Any, rate: float = rate) -> list[tuple[float, float | None]]:
            return [
                (n, key(m) if m.rate == rate else None) for n, m in zip(x, measured, strict=True)
            ]

        series.append(Series(f"{rate:.0f}/s: p99", points(lambda m: m.result.pct(99)), color))
        series.append(
            Series(f"{rate:.0f}/s: p50", points(lambda m: m.result.pct(50)), color, dashed=True)
        )
    series.append(
        Series(
            "simulator-added p99",
            [(n, m.added_p99) for n, m in zip(x, measured, strict=True)],
            PALETTE[2],
        )
    )
    series.append(
        Series(
            "longest collector pause",
            [(n, m.sample.pause_ms) for n, m in zip(x, measured, strict=True)],
            PALETTE[4],
            dashed=True,
        )
    )
    return lines(
        series,
        title="Soak, firm quotes: answer times and collector pauses per minute",
        x_label="minute of the run",
        y_label="milliseconds (log scale)",
        guides=[
            (STEADY_P99_MS, f"steady p99 and pause target {STEADY_P99_MS:g} ms"),
            (BURST_P99_MS, f"burst p99 target {BURST_P99_MS:g} ms"),
        ],
        log_y=True,
    )


def _memory_chart(measured: list[Minute]) -> str:
    x = list(range(1, len(measured) + 1))
    return lines(
        [
            Series(
                "simulator RSS",
                [(n, m.sample.rss_mb) for n, m in zip(x, measured, strict=True)],
                PALETTE[0],
            )
        ],
        title="Soak, firm quotes: the simulator's resident memory per minute",
        x_label="minute of the run",
        y_label="MB",
    )


def bench_soak_firm(
    phases: tuple[tuple[float, float], ...] = PHASES, state_dir: Path | None = None
) -> list[Section]:
    load_before = os.getloadavg()
    extra = ("--state-dir", str(state_dir)) if state_dir is not None else ()
    with processes.simulator("--config", str(FAST_MAKERS), *extra) as started:
        by_phase = asyncio.run(_soak(started.info["api_url"], started.info, phases))
    load_after = os.getloadavg()
    steady, burst = by_phase[0], [m for later in by_phase[1:] for m in later]
    measured = steady + burst
    plan = " then ".join(f"{rate:.0f}/s for {minutes:g} min" for rate, minutes in phases)
    minutes = Section(
        title=PER_MINUTE,
        intro=(
            f"Open loop, one `rfqsim serve` (fleet in its own process, the default): {plan}; "
            "keyed takers with proof of funds on, four makers answering after 1 ms, every quote "
            "a real signed order. Each row is one minute, by when its requests were scheduled: "
            "p50, p99, max; 'added p99': Server-Timing `sim` minus `makers`; the simulator "
            "process's RSS at the minute's end; 'store': the size of its history file and, in "
            "brackets, the RFQ records still in memory (GET /_sim/runtime); the longest "
            "collector pause of the minute in wall time (GET /_sim/runtime; in brackets the most "
            "CPU one full collection used: a wall time far above it is a collection that waited "
            "for a core); makers' late replies counted "
            "that minute (GET /_sim/makers). 'met': the minute against the steady targets "
            f"(p99 ≤ {STEADY_P99_MS:g} ms, no pause over {PAUSE_MS:g} ms, 0 late) in the first "
            f"phase, the burst targets (all quoted, p99 ≤ {BURST_P99_MS:g} ms) in the second."
        ),
        header=(
            "rate/s",
            "minute",
            "outcomes",
            "p50 ms",
            "p99 ms",
            "max ms",
            "added p99 ms",
            "RSS MB",
            "store",
            "longest GC pause ms (CPU ms)",
            "late replies",
            "met",
        ),
    )
    minutes.rows = [_minute_row(m, n < len(steady)) for n, m in enumerate(measured)]
    minutes.chart = _latency_chart(measured)
    command = "python -m bench --only soak-firm"
    overloaded = overload_note(measured)
    minutes.notes += [overloaded] if overloaded else []
    minutes.notes += [
        f"The curve the targets are about needs the full run, `{command}` (100/s for 30 min "
        "and 200/s for 10 min, about 42 minutes); `--quick` or `--soak-phases` give a shorter "
        "one.",
        "The machine is shared (2 cores; other engineers run tests on it at the same time): "
        f"load average (1, 5, 15 min) {', '.join(f'{v:.2f}' for v in load_before)} before the "
        f"run and {', '.join(f'{v:.2f}' for v in load_after)} after; read the trend, not the "
        "absolute figures.",
        "'store': the history file grows with every record that leaves memory (a temporary "
        "file; with `--soak-state-dir DIR`, DIR/rfqsim-history.sqlite3); the records in "
        "memory stay flat while the simulator keeps up.",
    ]
    targets = Section(
        title=TARGETS,
        intro=(
            "Issue 33's targets over the run above (ratios within one run): the first phase "
            "held to the steady targets, the second to the burst targets; the chart is the "
            "simulator's resident memory per minute of the same run."
        ),
        header=("target", "measured", "met"),
        rows=_targets(steady, burst),
    )
    targets.chart = _memory_chart(measured)
    return [minutes, targets]


def parse_phase(text: str) -> tuple[float, float]:
    """``100:30`` -> (100.0, 30.0): requests per second and whole minutes."""
    rate, _, minutes = text.partition(":")
    try:
        phase = (float(rate), float(minutes))
    except ValueError:
        phase = (0.0, 0.0)
    if phase[0] <= 0 or phase[1] < 1 or phase[1] != int(phase[1]):
        raise ValueError(f"{text}: RATE:MINUTES, a positive rate and whole minutes")
    return phase


__all__ = [
    "PHASES",
    "QUICK_PHASES",
    "TITLES",
    "Minute",
    "Sample",
    "bench_soak_firm",
    "late_replies",
    "longest_pause",
    "overload_note",
    "parse_phase",
    "per_minute",
]
