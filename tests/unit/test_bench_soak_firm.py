"""The soak bench's minute-by-minute reading (bench/soak_firm.py): one open-loop run cut into
minutes by when each request was scheduled, the collector's longest pause and the makers' late
replies per minute, the store column, and the targets' verdicts; and the open-loop driver it
runs on (bench/open_loop.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import aiohttp
import pytest

from bench.open_loop import OpenLoopResult, open_loop, run_open_loop
from bench.soak_firm import (
    Minute,
    Sample,
    _targets,
    late_replies,
    longest_pause,
    overload_note,
    parse_phase,
    per_minute,
)


def _run(requests: Sequence[tuple[float, float, str, float | None]]) -> OpenLoopResult:
    """(scheduled s, latency ms, outcome, simulator-added ms or None: no Server-Timing)."""
    result = OpenLoopResult(offered_rate=100.0, seconds=0.0)
    for at, ms, label, added in requests:
        result.scheduled_s.append(1000.0 + at)
        result.latencies_ms.append(ms)
        result.labels.append(label)
        result.outcomes[label] = result.outcomes.get(label, 0) + 1
        if added is not None:
            result.timed_s.append(1000.0 + at)
            result.inside_ms.append(added + 2.0)
            result.maker_wait_ms.append(2.0)
    return result


def _sample(late_total: int, pause_ms: float | None = 1.0, rss_mb: float = 100.0) -> Sample:
    return Sample(
        rss_mb=rss_mb,
        store_bytes=None,
        in_memory=None,
        pause_ms=pause_ms,
        pause_cpu_ms=pause_ms,
        late_total=late_total,
    )


def test_a_run_is_cut_into_minutes_by_schedule_not_by_answer() -> None:
    result = _run(
        [
            (0.0, 10.0, "quoted", 1.0),
            (59.9, 900.0, "quoted", 3.0),  # answered in minute 2, caused in minute 1
            (60.0, 20.0, "quoted", None),
            (119.0, 30.0, "http 503", 4.0),
        ]
    )
    minutes = per_minute(result, [_sample(2), _sample(5)], late_before=1, minute_s=60.0)
    first, second = minutes
    assert (first.minute, first.result.latencies_ms, first.late) == (1, [10.0, 900.0], 1)
    assert first.result.added_ms == [1.0, 3.0]
    assert first.all_quoted
    assert (second.minute, second.result.latencies_ms, second.late) == (2, [20.0, 30.0], 3)
    assert second.result.outcomes == {"quoted": 1, "http 503": 1}
    assert not second.all_quoted
    assert second.added_p99 == 4.0  # only the answers that carried Server-Timing


def test_a_minute_the_simulator_did_not_answer_leaves_its_count_to_the_next() -> None:
    result = _run([(0.0, 10.0, "quoted", 1.0), (60.0, 10.0, "quoted", 1.0)])
    result.scheduled_s.append(1120.0)
    result.latencies_ms.append(30_000.0)
    result.labels.append("failed: ConnectionTimeoutError")
    unread = Sample(None, None, None, None, None, None)
    minutes = per_minute(result, [_sample(1), unread, _sample(4)], late_before=0)
    assert [m.late for m in minutes] == [1, None, 3]
    assert minutes[2].result.outcomes == {"failed: ConnectionTimeoutError": 1}
    note = overload_note(minutes) or ""
    assert note.startswith("Overloaded: 1 of 3 requests got no answer or a 5xx")
    assert "in 1 of 3 minutes" in note
    assert overload_note(minutes[:1]) is None  # a minute read, every request answered
    rows = {row[0]: row[1:] for row in _targets(minutes, [])}
    assert rows["100/s: 0 late replies from makers"] == ("4 (1 minutes not read)", "not met")
    assert rows["100/s: no collector pause over 50 ms"] == (
        "longest 1.0 ms (1 minutes not read)",
        "not met",
    )
    none_read = {row[0]: row[1:] for row in _targets(minutes[1:2], [])}
    assert none_read["100/s: no collector pause over 50 ms"] == ("not read", "not met")


def test_the_longest_pause_is_taken_from_the_minutes_seconds_only() -> None:
    def second(at: str, wall: float, cpu: float) -> dict[str, object]:
        return {
            "at": f"2026-11-28T{at}.000Z",
            "pause_longest_ms": wall,
            "pause_longest_cpu_ms": cpu,
        }

    seconds = [
        second("10:00:59", 80.0, 80.0),  # the second before the minute
        second("10:01:00", 2.0, 14.0),  # overlaps the minute's start
        second("10:01:30", 12.5, 3.0),
        second("10:02:00", 7.0, 6.0),  # overlaps its end
        second("10:02:01", 70.0, 70.0),  # the next minute
    ]
    start = 1_795_860_060.0  # 2026-11-28T10:01:00Z
    assert longest_pause(seconds, start + 0.5, start + 60.5) == (12.5, 14.0)
    assert longest_pause(seconds, start + 1.0, start + 60.0) == (12.5, 3.0)
    assert longest_pause(seconds, start + 200, start + 260) == (None, None)


def test_late_replies_add_up_the_fleet() -> None:
    makers = {
        "fleet": [
            {"replies": {"counts": {"quoted": 9, "late": 2}}},
            {"replies": {"counts": {"quoted": 9}}},
            {"replies": {"counts": {"late": 1}}},
        ]
    }
    assert late_replies(makers) == 3


def test_phases_are_a_rate_and_whole_minutes() -> None:
    assert parse_phase("100:30") == (100.0, 30.0)
    for bad in ("100", "0:5", "100:0", "100:2.5", "x:3"):
        with pytest.raises(ValueError, match="RATE:MINUTES"):
            parse_phase(bad)


def _minutes(p99s: list[float], rss: list[float], pauses: list[float], late: int) -> list[Minute]:
    requests = [(60.0 * n, ms, "quoted", 1.0) for n, ms in enumerate(p99s)]
    samples = [
        _sample(late if n == len(p99s) - 1 else 0, pause, mb)
        for n, (pause, mb) in enumerate(zip(pauses, rss, strict=True))
    ]
    return per_minute(_run(requests), samples, late_before=0)


def test_the_targets_verdicts() -> None:
    steady = _minutes([20.0] * 5 + [29.0], [100, 110, 120, 125, 130, 150], [5.0] * 6, late=0)
    burst = _minutes([80.0, 90.0], [150, 150], [5.0, 5.0], late=0)
    rows = _targets(steady, burst)
    assert [row[2] for row in rows] == ["met"] * 7
    assert rows[0][1] == "20.0 → 29.0 ms (1.45x)"
    assert rows[3][1] == "130 → 150 MB (1.15x)"

    steady = _minutes([20.0, 60.0], [100, 200], [5.0, 51.0], late=2)
    burst = _minutes([120.0], [200], [5.0], late=0)
    burst[0].result.outcomes = {"quoted": 0, "http 503": 1}
    verdicts = {row[0]: (row[1], row[2]) for row in _targets(steady, burst)}
    assert verdicts["100/s: last minute's p99 within 1.5x the first's"][1] == "not met"
    assert verdicts["100/s: last minute's p99 ≤ 50 ms"][1] == "not met"
    assert verdicts["100/s: no collector pause over 50 ms"] == ("longest 51.0 ms", "not met")
    assert verdicts["100/s: RSS of the last minute ≤ 1.2x the 5th's"] == (
        "not measured: the phase had 2 minutes",
        "—",
    )
    assert verdicts["100/s: 0 late replies from makers"] == ("2", "not met")
    assert verdicts["100/s: all answered (quoted)"] == ("0 of 1", "not met")
    assert verdicts["100/s: p99 ≤ 100 ms"] == ("120.0 ms", "not met")


async def test_unanswered_requests_are_outcomes_when_counted() -> None:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
        result = await run_open_loop(
            session,
            "http://127.0.0.1:9/nothing-listens-here",  # the discard port: refused at once
            rate=100.0,
            seconds=0.05,
            body=lambda i: {"i": i},
            failures_counted=True,
        )
    assert result.outcomes == {"failed: ClientConnectorError": 5}
    assert len(result.latencies_ms) == len(result.scheduled_s) == 5
    assert result.added_ms == []


async def test_a_failed_request_fails_the_open_loop_run() -> None:
    sent: list[int] = []

    async def send(index: int, scheduled: float) -> None:
        sent.append(index)
        if index == 3:
            raise ConnectionResetError("peer closed")
        await asyncio.sleep(0.001)

    with pytest.raises(ConnectionResetError):
        await open_loop(rate=200.0, seconds=0.05, send=send)
    assert sorted(sent) == list(range(10))  # the others still ran to the end
