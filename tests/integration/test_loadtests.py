"""loadtests/: short, bounded locust runs of ``rfq_storm`` through ``python -m loadtests.run``
against real simulators: one that passes (the runner starts and stops its own simulator), and
one, distributed over two worker processes, whose makers were slowed through ``/_sim/makers``
past the budget the run is held to, which must exit non-zero with the violation in the JSON
summary. Plus the pure parts (exact counting, shapes, the loopback rule) without a simulator."""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest

from loadtests.common import NotLoopback, check_bounds, ensure_loopback, parse_duration_s
from loadtests.control import Control
from loadtests.run import progress_line
from loadtests.shapes import plan
from loadtests.slo import Tally, Thresholds, allowed_over, progress, standard_checks
from makers.config import default_fleet
from tests.integration.load_runs import checks_by_name, run_profile
from tests.integration.serve_process import serve

# The two runs share one xdist worker so they do not compete with each other for the CPU.
SERIAL = pytest.mark.xdist_group("loadtests")


@pytest.mark.integration
@SERIAL
def test_a_short_storm_passes_and_leaves_reports_and_the_simulator_as_it_was(
    tmp_path: Path,
) -> None:
    # 8 s, 5 users, a simulator of its own. The tolerance is wider than the default 30 ms
    # because this test shares a CI machine with the rest of the suite; the plumbing is what
    # is tested here, the acceptance runs use the defaults.
    code, summary, output = run_profile(
        tmp_path, "--run-time", "8s", "--users", "5", "--spawn-rate", "5", "--tolerance-ms", "200"
    )
    assert code == 0, output[-3000:]
    # Quiet: no locust stats table in the terminal (they are in the report files), the verdict
    # at the end with each check as pass/FAIL.
    assert "Aggregated" not in output, output[-3000:]
    assert "loadtests: rfq_storm SLO PASSED (exit 0)" in output
    assert "pass  user_exceptions: 0 unhandled exception(s)" in output
    # The simulator's own share, from its Server-Timing, per request name in the report.
    assert "simulator-added latency (Server-Timing sim - makers): p99 " in output
    added = summary["simulator_added"]
    assert added["all"]["count"] > 0
    assert added["by_name"]["POST /v2/rfq/request"]["count"] > 0, added["by_name"].keys()
    assert added["warn_ms"] == 10.0
    # Whose wait the makers' wait was: each maker of the default fleet, named, the slowest
    # to answer first, and said in the terminal.
    makers = added["makers"]["POST /v2/rfq/request"]
    assert set(makers) <= {m.name for m in default_fleet().makers}, makers
    assert (
        sum(row["slowest"] for row in makers.values())
        == added["split"]["POST /v2/rfq/request"]["makers"]["count"]
    )
    slowest = next(iter(makers))
    assert f"makers' wait of POST /v2/rfq/request: mostly {slowest}'s" in output, output[-3000:]
    assert "Aggregated" in (tmp_path / "reports" / "locust.log").read_text()
    assert summary["passed"] is True
    assert summary["exit_code"] == 0
    assert summary["mode"] == "local"
    assert summary["slo"]["budget_ms"] == 750
    assert summary["slo"]["threshold_ms"] == 950
    checks = checks_by_name(summary)
    assert all(c["passed"] for c in checks.values()), checks
    assert set(checks) >= {"setup", "latency", "error_ratio", "no_quote_ratio"}
    judged = summary["figures"]["judged"]
    assert judged["count"] > 0
    assert judged["over_threshold"] == 0
    # The progress line's last figures are the report's: the same tally, written once more
    # with the summary.
    last = json.loads((tmp_path / "reports" / "progress.json").read_text())
    assert (last["judged"], last["p50_ms"], last["slo_percentile_ms"]) == (
        judged["count"],
        judged["p50_ms"],
        judged["p99_ms"],
    )
    assert last["requests"] == summary["figures"]["requests"]
    names = ", ".join(summary["slo"]["judged_requests"])
    assert f"{names}: p50 " in output, output[-3000:]  # the line names what it judges
    assert summary["figures"]["errors"] == 0
    counters = summary["figures"]["counters"]
    assert counters["quoted"] > 0
    assert counters.get("keyless_proofs", 0) >= 1  # one of five users is keyless
    assert summary["setup"]["takers"] == 32
    assert not [line for line in summary["cleanup"] if line.startswith("FAILED")]
    reports = tmp_path / "reports"
    for name in ("locust_stats.csv", "locust_failures.csv", "locust.html", "locust.json"):
        assert (reports / name).exists(), name
    # Our own page: the verdict with every check's exact counts, the split of each request
    # name's answer time, and a latency histogram per request name with the budget marked.
    page = (reports / "report.html").read_text()
    assert "SLO PASSED" in page
    for check in summary["checks"]:
        assert f"data-check='{check['name']}'" in page, check["name"]
    assert html.escape(checks["latency"]["detail"], quote=True) in page
    assert "<figure id='split'><svg" in page
    assert "makers&#x27; wait" in page
    assert "simulator-added" in page
    for name in summary["figures"]["by_name"]:
        assert f"data-histogram='{html.escape(name, quote=True)}'" in page, name
    assert "reply budget 750 ms" in page
    assert "src=" not in page
    assert "<link" not in page
    assert "<script" not in page
    text = (reports / "slo.json").read_text()
    assert not re.search(r"tx_test_[0-9a-f]+\.", text), "the run's API key leaked"
    assert not re.search(r"0x[0-9a-fA-F]{64}", text), "a taker's private key leaked"


@pytest.mark.integration
@SERIAL
def test_makers_slower_than_the_budget_fail_the_run_with_exit_code_one(tmp_path: Path) -> None:
    env = {**os.environ, "RFQSIM_STATE_DIR": str(tmp_path / "state")}
    with serve(tmp_path, env=env) as served:
        control = Control(served.api_url)
        limits_before = control.limits()
        for maker in control.fleet():
            control.change_maker(maker["name"], {"latency": {"kind": "fixed", "ms": 300}})
        # Every maker answers after 300 ms; the run is held to a 200 ms budget, no tolerance.
        # Two forked worker processes: their counts reach the master, which alone decides.
        code, summary, output = run_profile(
            tmp_path,
            "--processes",
            "2",
            "--host",
            served.api_url,
            "--run-time",
            "8s",
            "--users",
            "5",
            "--spawn-rate",
            "5",
            "--budget-ms",
            "200",
            "--tolerance-ms",
            "0",
        )
        assert code == 1, output[-3000:]
        assert summary["passed"] is False
        assert summary["exit_code"] == 1
        assert (summary["mode"], summary["workers"]) == ("master", 2)
        checks = checks_by_name(summary)
        assert checks["latency"]["passed"] is False
        judged = summary["figures"]["judged"]
        assert judged["count"] > 0
        assert judged["over_threshold"] == judged["count"]  # every answer came after 200 ms
        assert judged["p50_ms"] > 300
        assert checks["latency"]["observed"] == judged["count"]
        # Only the latency threshold is broken: the venue still quoted everything in its budget.
        assert checks["error_ratio"]["passed"] is True
        assert checks["no_quote_ratio"]["passed"] is True
        assert summary["slo"]["threshold_ms"] == 200
        # The run put the simulator back: limits as before, its key revoked.
        assert control.limits() == limits_before
        keys = control.data("GET", "/_sim/keys")["keys"]
        (run_key,) = [k for k in keys if k["key_id"] == summary["setup"]["key_id"]]
        assert run_key["status"] == "revoked"


# -- the pure parts --------------------------------------------------------------------------


def test_percentile_judged_on_exact_counts() -> None:
    assert allowed_over(100, 99) == 1
    assert allowed_over(99, 99) == 0  # nearest rank 99 of 99: the slowest must be within
    assert allowed_over(1000, 99) == 10
    assert allowed_over(1001, 99) == 10  # rank ceil(990.99) = 991
    assert allowed_over(1000, 99.9) == 1
    assert allowed_over(0, 99) == 0


def test_a_tally_counts_751_ms_over_a_750_ms_budget_where_buckets_could_not() -> None:
    tally = Tally(budget_ms=750, threshold_ms=780)
    for latency in [400.0] * 97 + [750.0, 751.0, 781.5]:
        tally.record("firm", latency, judged=True, error=None, status="quoted")
    assert (tally.judged, tally.over_budget, tally.over_threshold) == (100, 2, 1)
    assert tally.quantile_ms(99) == 751.0
    assert tally.quantile_ms(100) == 781.5
    limits = Thresholds(750, 30, 99, 0.01, 0.05)
    checks = {c.name: c for c in standard_checks(tally, limits, quotes_expected=True)}
    assert checks["latency"].passed  # 1 of 100 over 780 ms: p99 is within
    tally.record("firm", 790.0, judged=True, error=None, status="no_quote", no_quote_reason="x")
    checks = {c.name: c for c in standard_checks(tally, limits, quotes_expected=True)}
    assert not checks["latency"].passed  # 2 of 101 over: allowed 1
    assert checks["no_quote_ratio"].observed == round(1 / 101, 6)


def test_workers_counts_merge_into_the_masters() -> None:
    master, worker = Tally(750, 780), Tally(750, 780)
    master.record("firm", 100.0, judged=True, error=None, status="quoted")
    worker.record("firm", 800.0, judged=True, error="429 rate_limited", status=None)
    worker.count("quoted", 3)
    master.merge(json.loads(json.dumps(worker.drain())))  # through a message and back
    assert (master.requests, master.errors, master.over_threshold) == (2, 1, 1)
    assert master.counters["quoted"] == 3
    assert master.error_kinds["429 rate_limited"] == 1
    assert worker.requests == 0  # drained


def test_shapes_stay_within_users_and_end_at_the_run_time() -> None:
    assert plan("steady", 10, 20, 4, 60) == (20, 4)
    assert [plan("ramp", t, 20, 4, 60) for t in (0, 15, 30, 59)] == [
        (5, 4),
        (10, 4),
        (15, 4),
        (20, 4),
    ]
    assert plan("spike", 10, 20, 4, 60) == (4, 20.0)
    assert plan("spike", 30, 20, 4, 60) == (20, 20.0)
    assert plan("spike", 50, 20, 4, 60) == (4, 20.0)
    assert plan("steady", 60, 20, 4, 60) is None


def test_only_loopback_targets_and_bounded_runs() -> None:
    for url in (
        "http://127.0.0.1:8080",
        "http://127.9.9.9",
        "http://localhost:1",
        "http://[::1]:80",
    ):
        assert ensure_loopback(url) == url
    for refused in ("http://10.0.0.5:8080", "https://example.com", "http://0.0.0.0:8080", "", None):
        with pytest.raises(NotLoopback):
            ensure_loopback(refused)
    assert parse_duration_s("60s") == 60
    assert parse_duration_s("1h30m") == 5400
    assert parse_duration_s("90") == 90
    with pytest.raises(ValueError, match="users"):
        check_bounds(201, None, 60)
    with pytest.raises(ValueError, match="run-time"):
        check_bounds(10, None, 3 * 3600)


def test_per_name_max_counts_requests_the_budget_does_not_judge() -> None:
    tally = Tally(budget_ms=750, threshold_ms=780)
    tally.record("cancel", 90.0, judged=False, error=None, status=None)
    tally.record("firm", 40.0, judged=True, error=None, status="quoted")
    assert tally.by_name["cancel"].max_ms == 90.0  # was 0.0: only judged requests counted
    assert tally.by_name["firm"].max_ms == 40.0
    assert tally.max_ms == 40.0  # the judged maximum stays the judged one


def test_the_progress_line_reads_the_masters_progress_json(tmp_path: Path) -> None:
    now = tmp_path / "progress.json"
    assert progress_line(now, 3, 60) is None  # nothing written yet
    limits = Thresholds(750, 30, 99, 0.01, 0.05)
    tally = Tally(limits.budget_ms, limits.threshold_ms)
    for ms in (40.0, 45.0, 800.0):
        tally.record("firm", ms, judged=True, error=None, status="quoted")
    tally.record("cancel", 2.0, judged=False, error=None, status=None)  # not in the figures
    now.write_text(json.dumps(progress(tally, limits, frozenset({"firm"}))))
    assert progress_line(now, 12.4, 60) == (
        "12/60 s  4 requests  0 failures  firm: p50 45 ms  p99 800 ms  1 over the budget"
    )
