"""Folding test reports into rule statuses, and rendering the matrix (no server needed)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conformance.harness.cli import TESTS_DIR, build_parser, pytest_args, run
from conformance.report import (
    BASE_URL_PROPERTY,
    INHERENT_PROPERTY,
    RULES_PROPERTY,
    ResultCollector,
    build_matrix,
    rule_status,
    uncovered,
)
from conformance.report.files import write_report
from conformance.report.markdown import render_markdown
from conformance.rules import Rule
from conformance.wire.needs import inherent_reason

RULES = [
    Rule("rfq/a/one", "rfq", "A", "one", "First | with a pipe"),
    Rule("rfq/a/two", "rfq", "A", "two", "Second"),
    Rule("ramp/b/three", "ramp", "B", "three", "Third: not shown.", kind="not_shown"),
    Rule("v1/c/four", "v1", "C", "four", "Fourth"),
]


def _props(*rule_ids: str, base_url: str | None = None) -> list[tuple[str, str]]:
    props = [(RULES_PROPERTY, " ".join(rule_ids))]
    if base_url:
        props.append((BASE_URL_PROPERTY, base_url))
    return props


def _run(collector: ResultCollector, nodeid: str, rule_ids: tuple[str, ...], **phases: str) -> None:
    for when in ("setup", "call", "teardown"):
        outcome = phases.get(when, "passed")
        if when == "call" and phases.get("setup") in ("skipped", "failed"):
            continue
        collector.add(
            nodeid=nodeid,
            when=when,
            outcome=outcome,
            properties=_props(*rule_ids),
            longrepr=("f.py", 1, "Skipped: no chain") if outcome == "skipped" else None,
            longreprtext="def test():\n>   assert 1 == 2\nE   assert 1 == 2\n"
            if outcome == "failed"
            else "",
        )


@pytest.mark.parametrize(
    ("outcomes", "status"),
    [
        ([], "not_covered"),
        (["passed"], "passed"),
        (["passed", "skipped"], "passed"),
        (["skipped", "skipped"], "skipped"),
        (["passed", "failed"], "failed"),
        (["skipped", "failed"], "failed"),
    ],
)
def test_rule_status(outcomes: list[str], status: str) -> None:
    assert rule_status(outcomes) == status


def test_phases_fold_into_one_outcome() -> None:
    collector = ResultCollector()
    _run(collector, "t.py::ok", ("rfq/a/one",))
    _run(collector, "t.py::setup_skip", ("rfq/a/one",), setup="skipped")
    _run(collector, "t.py::call_fail", ("rfq/a/two",), call="failed")
    _run(collector, "t.py::teardown_error", ("v1/c/four",), teardown="failed")
    _run(collector, "t.py::setup_error", ("v1/c/four",), setup="failed")
    results = collector.results
    assert results["t.py::ok"].outcome == "passed"
    assert results["t.py::ok"].reason is None
    assert (results["t.py::setup_skip"].outcome, results["t.py::setup_skip"].reason) == (
        "skipped",
        "no chain",
    )
    assert results["t.py::call_fail"].outcome == "failed"
    assert results["t.py::call_fail"].reason == "assert 1 == 2"
    assert results["t.py::teardown_error"].outcome == "failed"
    assert results["t.py::teardown_error"].reason == "error in teardown: assert 1 == 2"
    assert results["t.py::setup_error"].reason == "error in setup: assert 1 == 2"


def test_unmarked_reports_are_ignored() -> None:
    collector = ResultCollector()
    collector.add(nodeid="t.py::x", when="call", outcome="passed", properties=[])
    collector.add(nodeid="t.py::y", when="call", outcome="passed", properties=[("other", "1")])
    assert not collector


def test_xdist_transported_properties_and_base_url() -> None:
    collector = ResultCollector()
    # After xdist transport the (name, value) tuples arrive as lists.
    collector.add(
        nodeid="t.py::x",
        when="call",
        outcome="passed",
        properties=[[RULES_PROPERTY, "rfq/a/one rfq/a/two"], [BASE_URL_PROPERTY, "http://h:1"]],
    )
    assert collector.results["t.py::x"].rules == ("rfq/a/one", "rfq/a/two")
    assert collector.base_urls == {"http://h:1"}


def test_xfail_counts_as_skipped() -> None:
    collector = ResultCollector()
    collector.add(
        nodeid="t.py::x",
        when="call",
        outcome="skipped",
        properties=_props("rfq/a/one"),
        wasxfail="not built yet",
    )
    result = collector.results["t.py::x"]
    assert (result.outcome, result.reason) == ("skipped", "xfail: not built yet")


def test_matrix_and_markdown(tmp_path: Path) -> None:
    collector = ResultCollector()
    _run(collector, "t.py::ok", ("rfq/a/one",))
    _run(collector, "t.py::bad", ("rfq/a/one", "rfq/a/two"), call="failed")
    _run(collector, "t.py::skip", ("ramp/b/three",), setup="skipped")
    _run(collector, "t.py::unknown", ("rfq/zz/gone",))
    matrix = build_matrix(
        RULES,
        collector.results.values(),
        base_url="http://127.0.0.1:8080",
        generated_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    assert matrix["generated_at"] == "2026-01-02T03:04:05Z"
    assert matrix["totals"] == {
        "rules": 4,
        "passed": 0,
        "failed": 2,
        "skipped": 1,
        "not_covered": 1,
        "not_selected": 0,
        "selected": 3,
        "skipped_by_kind": {"inherent_control": 0, "not_ported": 1, "missing_input": 0},
        "tests": 4,
    }
    by_id = {rule["id"]: rule for rule in matrix["rules"]}
    assert [t["nodeid"] for t in by_id["rfq/a/one"]["tests"]] == ["t.py::bad", "t.py::ok"]
    assert by_id["rfq/a/one"]["tests"][0] == {
        "nodeid": "t.py::bad",
        "area": "other",
        "outcome": "failed",
        "reason": "assert 1 == 2",
    }
    assert by_id["ramp/b/three"]["status"] == "skipped"
    assert by_id["ramp/b/three"]["kind"] == "not_shown"
    assert uncovered(matrix) == ["v1/c/four"]

    json_path, md_path, _ = write_report(tmp_path / "out", matrix)
    assert json.loads(json_path.read_text()) == matrix
    markdown = md_path.read_text()
    assert markdown == render_markdown(matrix)
    assert "| 4 | 0 | 2 | 1 | 1 | 0 | 4 |" in markdown
    assert "## rfq (1-rfq-v2.md)" in markdown
    assert "## ramp (2-ramp-v2.md)" in markdown
    assert "## v1 (3-v1-and-rates-feed.md)" in markdown
    failed_row = (
        "| `rfq/a/one` | **FAILED** | `t.py::bad` failed: assert 1 == 2<br>`t.py::ok` passed |"
    )
    assert failed_row in markdown
    assert "First \\| with a pipe" in markdown
    assert "| `ramp/b/three` | skipped (not_ported) *(not shown)* |" in markdown
    assert "| `v1/c/four` | not covered |  | Fourth |" in markdown


def test_report_opens_with_areas_and_failures_keeps_full_statements_and_writes_junit(
    tmp_path: Path,
) -> None:
    long_text = "A statement well over one hundred and twenty characters, " * 4 + "END."
    rules = [*RULES, Rule("rfq/a/long", "rfq", "A", "long", long_text)]
    collector = ResultCollector()
    _run(collector, "conformance/tests/test_health.py::ok", ("rfq/a/one",))
    _run(
        collector,
        "conformance/tests/test_rfq_lifecycle.py::bad",
        ("rfq/a/long",),
        call="failed",
    )
    _run(
        collector,
        "conformance/tests/test_ramp_catalog.py::skip",
        ("ramp/b/three",),
        setup="skipped",
    )
    matrix = build_matrix(rules, collector.results.values(), base_url="http://x")
    assert [row["area"] for row in matrix["areas"]] == ["rfq", "conventions", "ramp"]
    rfq_row = matrix["areas"][0]
    assert (rfq_row["tests"], rfq_row["failed"], rfq_row["rules_failed"]) == (1, 1, 1)

    _, md_path, junit_path = write_report(tmp_path, matrix)
    markdown = md_path.read_text()
    summary = markdown.index("## Summary by area")
    failures = markdown.index("## Failures (1 rules)")
    first_document = markdown.index("## rfq (1-rfq-v2.md)")
    assert summary < failures < first_document
    assert long_text in markdown[failures:first_document]  # the whole statement, not cut
    assert long_text in markdown[first_document:]
    assert "…" not in markdown

    root = ET.parse(junit_path).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "1", "1")
    (bad,) = [case for case in root.iter("testcase") if case.get("name") == "bad"]
    assert bad.get("classname") == "conformance.tests.test_rfq_lifecycle"
    failure = bad.find("failure")
    assert failure is not None
    assert failure.get("message") == "assert 1 == 2"
    assert "def test():" in (failure.text or "")  # the full failure text
    assert [p.get("value") for p in bad.iter("property")] == ["rfq/a/long"]


def test_list_uncovered_is_a_static_collection_unless_asked_to_run() -> None:
    parser = build_parser()
    static = pytest_args(parser.parse_args(["--list-uncovered"]), [])
    assert "--collect-only" in static
    assert "--list-uncovered" in static
    ran = pytest_args(parser.parse_args(["--list-uncovered", "--run"]), [])
    assert "--collect-only" not in ran
    assert "--collect-only" not in pytest_args(parser.parse_args([]), [])
    # Tests named after -- are the run; without them (or with options only) the whole suite.
    whole = str(TESTS_DIR)
    assert whole in pytest_args(parser.parse_args([]), ["-k", "maker"])
    assert whole in pytest_args(parser.parse_args([]), ["-k", "conformance/tests/x.py or " * 40])
    assert whole in pytest_args(parser.parse_args([]), ["--deselect", "conformance/tests/x.py"])
    chosen = pytest_args(parser.parse_args([]), ["conformance/tests/test_health.py::test_x", "-q"])
    assert whole not in chosen
    assert chosen[0] == "-p", chosen


def test_no_schemathesis_leaves_its_module_out_whatever_else_is_chosen() -> None:
    parser = build_parser()
    module = str(TESTS_DIR / "test_schemathesis.py")
    for argv, extra in (
        ([], []),
        (["--only", "schema", "--only", "conventions"], []),
        ([], ["-k", "openapi"]),
    ):
        command = pytest_args(parser.parse_args([*argv, "--no-schemathesis"]), extra)
        assert f"--ignore={module}" in command, command
        assert module not in command, command  # not given as a path either
        with_it = pytest_args(parser.parse_args(argv), extra)
        assert f"--ignore={module}" not in with_it
    # Nothing would be left to run: said at once, before any check or test.
    assert run(parser.parse_args(["--only", "schema", "--no-schemathesis"])) == 2


def test_rules_whose_every_test_inherently_needs_control_leave_the_control_free_share() -> None:
    collector = ResultCollector()

    def add(nodeid: str, rule_ids: tuple[str, ...], outcome: str, inherent: str | None) -> None:
        props = _props(*rule_ids) + ([(INHERENT_PROPERTY, inherent)] if inherent else [])
        collector.add(
            nodeid=nodeid,
            when="setup" if outcome == "skipped" else "call",
            outcome=outcome,
            properties=props,
            longrepr=("f.py", 1, "Skipped: needs sim_control: no /_sim")
            if outcome == "skipped"
            else None,
        )

    add("t.py::fault", ("rfq/a/one",), "skipped", "faults")
    add("t.py::slow_maker", ("rfq/a/one",), "skipped", "makers")
    add("t.py::fault_too", ("rfq/a/two",), "skipped", "faults")
    add("t.py::plain", ("rfq/a/two",), "passed", None)  # one control-free test: not inherent
    add("t.py::portable", ("ramp/b/three",), "skipped", None)
    matrix = build_matrix(RULES, collector.results.values(), base_url="http://x")
    by_id = {rule["id"]: rule for rule in matrix["rules"]}
    assert by_id["rfq/a/one"]["inherent_control"] == ["faults", "makers"]
    assert "inherent_control" not in by_id["rfq/a/two"]
    assert "inherent_control" not in by_id["ramp/b/three"]
    # rfq/a/two passed and ramp/b/three skipped count in the share; v1/c/four has no test in
    # this run (not covered), so it is not one of the selected rules the share is over.
    assert matrix["control_free"] == {"rules": 2, "passed": 1}
    markdown = render_markdown(matrix)
    assert (
        "Selected rules that do not inherently need the control API: 2 (1 do: faults 1, "
        "makers 1); of those, passed: 1 (50.0 %)."
    ) in markdown
    assert by_id["rfq/a/one"]["skip_kind"] == "inherent_control"
    assert by_id["ramp/b/three"]["skip_kind"] == "not_ported"


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [((), {}, None), ((), {"because": "faults"}, "faults"), (("clock",), {}, "clock")],
)
def test_sim_only_reasons(args: tuple[str, ...], kwargs: dict[str, str], expected: str) -> None:
    assert inherent_reason(args, kwargs) == expected


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {"because": "lazy"}), (("faults", "clock"), {}), ((), {"why": "faults"})],
)
def test_sim_only_refuses_unknown_reasons(args: tuple[str, ...], kwargs: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="sim_only"):
        inherent_reason(args, kwargs)
