"""The load harness's simulator-added latency (loadtests/sim_added.py): Server-Timing parsed,
sim - makers per request name, merged from workers through the tally, and the warning."""

from __future__ import annotations

import json

from loadtests.report_page import bins, render_page
from loadtests.sim_added import SimAdded, added_ms
from loadtests.slo import Tally
from rfqkit.server_timing import maker_wait_entry, maker_waits, server_timing


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


def _added_p99(ms: float) -> SimAdded:
    added = SimAdded()
    for _ in range(100):
        added.record("POST /v2/rfq/request", f"sim;dur={ms + 500}, makers;dur=500", ms + 503)
    return added


def test_a_p99_just_above_the_threshold_is_reported_not_warned_about() -> None:
    figures, lines, warn = _added_p99(10.2).report(10.0)
    assert not warn
    assert figures["warn_from_ms"] == 15.0
    assert not any(line.startswith("WARNING") for line in lines)
    assert lines[-1] == (
        "  (p99 10.2 ms is above the 10 ms threshold but below 15 ms: within measurement "
        "noise, no warning)"
    )


def test_the_warning_names_what_it_measured_and_suggests_only_what_is_missing() -> None:
    measured = {"simulator_core_share": 0.97, "load_average_1m": 6.2, "cores": 2, "fleet": "own"}
    _, lines, warn = _added_p99(20.0).report(10.0, measured)
    assert warn
    warning = lines[-1]
    assert "most of it on POST /v2/rfq/request (p99 20.0 ms over 100)" in warning
    assert "the simulator's process used 97% of one core over the run" in warning
    assert "the machine's load average was 6.2 on 2 cores" in warning
    assert "the fleet already ran in its own process" in warning
    assert "offer less load (--users)" in warning
    assert "the cores were oversubscribed" in warning
    assert "run the fleet in its own process" not in warning  # already in place
    quiet = {"simulator_core_share": 0.3, "load_average_1m": 0.5, "cores": 2, "fleet": "in"}
    _, lines, _ = _added_p99(20.0).report(10.0, quiet)
    assert "run the fleet in its own process (--simulator-arg=--makers-process=own)" in lines[-1]
    assert "offer less load" not in lines[-1]
    assert "oversubscribed" not in lines[-1]


def test_each_answer_is_split_into_the_makers_wait_ours_and_the_rest() -> None:
    added = SimAdded()
    added.record("firm", "sim;dur=742.5, makers;dur=740", 745.0)
    added.record("levels", "sim;dur=0.4", 1.2)
    figures, _, _ = added.report(10.0)
    firm = figures["split"]["firm"]
    assert (firm["makers"]["p50_ms"], firm["added"]["p50_ms"]) == (740.0, 2.5)
    assert firm["outside"]["p50_ms"] == 2.5  # 745 - 742.5
    assert figures["split"]["levels"]["makers"]["p50_ms"] == 0.0


def test_the_load_report_page_shows_the_verdict_the_split_and_a_histogram_per_name() -> None:
    added = SimAdded()
    for _ in range(50):
        added.record("firm <b>", "sim;dur=745, makers;dur=740", 748.0)
    figures, _, _ = added.report(10.0)
    summary = {
        "profile": "rfq_storm",
        "passed": False,
        "exit_code": 1,
        "host": "http://127.0.0.1:1",
        "checks": [
            {
                "name": "latency",
                "passed": False,
                "observed": 3,
                "limit": 0,
                "detail": "3 of 50 judged responses took longer, at most 0 may",
            }
        ],
        "slo": {"judged_requests": ["firm <b>"], "budget_ms": 750.0},
        "figures": {
            "by_name": {"firm <b>": {"requests": 50, "histogram_ms": {"748": 47, "781": 3}}}
        },
        "simulator_added": figures,
    }
    page = render_page(summary)
    assert "SLO FAILED" in page
    assert "<span class='fail'>FAIL</span>" in page
    assert "3 of 50 judged responses took longer, at most 0 may" in page
    assert "firm <b>" not in page  # a request name is text, never markup
    assert "data-histogram='firm &lt;b&gt;'" in page
    assert "reply budget 750 ms" in page
    assert "makers&#x27; wait" in page
    assert bins({"748": 47, "781": 3}) == [
        *[(i * 20.0, (i + 1) * 20.0, 0) for i in range(37)],
        (740.0, 760.0, 47),
        (760.0, 780.0, 0),
        (780.0, 800.0, 3),
    ]


def test_each_makers_wait_is_read_and_the_slowest_named() -> None:
    header = 'sim;dur=395, makers;dur=390, maker;dur=2.1;desc="alpha", maker;dur=388;desc="de,lta"'
    assert server_timing(header) == {"sim": 395.0, "makers": 390.0}  # maker entries apart
    assert maker_waits(header) == {"alpha": 2.1, "de,lta": 388.0}  # a comma inside quotes
    assert maker_waits(maker_wait_entry('say "hi"\\', 1.5)) == {'say "hi"\\': 1.5}
    worker, master = SimAdded(), SimAdded()
    for _ in range(3):
        worker.record("firm", header)
    worker.record("firm", 'sim;dur=9, makers;dur=5, maker;dur=5;desc="alpha"')
    worker.record("cancel", "sim;dur=1")  # no auction: no maker figures
    master.merge(json.loads(json.dumps(worker.to_json())))  # as a worker hands it over
    figures, lines, _ = master.report(10.0)
    assert list(figures["makers"]) == ["firm"]
    assert list(figures["makers"]["firm"]) == ["de,lta", "alpha"]  # the slowest first
    assert figures["makers"]["firm"]["de,lta"] == {
        "count": 3,
        "p50_ms": 388.0,
        "p99_ms": 388.0,
        "max_ms": 388.0,
        "slowest": 3,
    }
    assert figures["makers"]["firm"]["alpha"]["slowest"] == 1
    assert (
        "makers' wait of firm: mostly de,lta's, the slowest to answer in 3 of 4 auctions "
        "(its wait p50 388.0 ms, p99 388.0 ms)"
    ) in lines
    page = render_page({"simulator_added": figures, "passed": True})
    assert "<table class='makers' data-request='firm'>" in page
    assert "<tr data-maker='de,lta'><td>de,lta</td><td>3</td>" in page
    assert "<td>3 of 4</td>" in page
