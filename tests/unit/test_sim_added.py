"""The load harness's simulator-added latency (loadtests/sim_added.py): Server-Timing parsed,
sim - makers per request name, merged from workers through the tally, and the warning."""

from __future__ import annotations

import json

from loadtests.sim_added import SimAdded, added_ms
from loadtests.slo import Tally
from rfqkit.server_timing import server_timing


def test_server_timing_entries_are_read_and_the_makers_wait_subtracted() -> None:
    assert server_timing("sim;dur=4.5, makers;dur=1.25") == {"sim": 4.5, "makers": 1.25}
    assert server_timing('sim;desc="x";dur=2, bogus;dur=abc, cache') == {"sim": 2.0}
    assert added_ms("sim;dur=4.5, makers;dur=1.25") == 3.25
    assert added_ms("sim;dur=0.8") == 0.8  # no maker was asked: all of it is ours
    assert added_ms("makers;dur=3") is None  # nothing says how long the simulator took
    assert added_ms(None) is None  # a target without Server-Timing (the real service)


def test_figures_per_name_and_the_warning_above_the_threshold() -> None:
    added = SimAdded()
    for ms in [1.0] * 98 + [2.0, 30.0]:
        added.record("firm", f"sim;dur={ms + 700}, makers;dur=700")
    added.record("levels", "sim;dur=0.31")
    figures, lines, warn = added.report(10.0)
    assert figures["by_name"]["firm"] == {
        "count": 100,
        "p50_ms": 1.0,
        "p99_ms": 2.0,
        "max_ms": 30.0,
    }
    assert figures["by_name"]["levels"]["p99_ms"] == 0.4  # 0.1 ms steps, rounded up
    assert figures["all"]["count"] == 101
    assert not warn
    assert not any(line.startswith("WARNING") for line in lines)
    for _ in range(5):
        added.record("firm", "sim;dur=760, makers;dur=700")  # 60 ms of our own
    figures, lines, warn = added.report(10.0)
    assert warn
    assert figures["warned"] is True
    assert lines[-1].startswith("WARNING: the simulator itself added 60.0 ms at p99")


def test_workers_figures_reach_the_master_through_the_tally() -> None:
    master, worker = Tally(750, 780), Tally(750, 780)
    master.sim_added.record("firm", "sim;dur=3, makers;dur=1")
    worker.sim_added.record("firm", "sim;dur=9, makers;dur=1")
    master.merge(json.loads(json.dumps(worker.drain())))
    assert master.sim_added.by_name["firm"].count == 2
    assert master.sim_added.by_name["firm"].max_ms == 8.0
    assert worker.sim_added.by_name == {}  # drained


def test_no_server_timing_says_so_instead_of_a_figure() -> None:
    figures, lines, warn = SimAdded().report(10.0)
    assert figures["all"] is None
    assert not warn
    assert lines == ["simulator-added latency: the target sent no Server-Timing"]
