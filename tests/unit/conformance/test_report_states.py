"""Every rule in exactly one state, skipped rules by kind, the headline over the selected rules,
and matrix.html parsed back (every rule once, totals equal to matrix.json's, everything
escaped, nothing fetched from elsewhere). No server needed."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conformance.report import (
    INHERENT_PROPERTY,
    RULES_PROPERTY,
    ResultCollector,
    build_matrix,
    headline,
)
from conformance.report.files import write_report
from conformance.report.html import render_html, request_ids
from conformance.report.markdown import render_markdown
from conformance.rules import Rule
from conformance.wire.needs import control_skip_message, skip_kind, skip_message

CONVENTIONS = "conformance/tests/test_conventions.py"
AUTH = "conformance/tests/test_auth_keys.py"
RULES = [
    Rule("rfq/a/passed", "rfq", "A", "passed", "Passes"),
    Rule("rfq/a/clock", "rfq", "A", "clock", "Needs the clock moved"),
    Rule("rfq/a/mixed", "rfq", "A", "mixed", "One inherent test, one not ported"),
    Rule("rfq/a/wallet", "rfq", "A", "wallet", "Needs a second wallet"),
    Rule("rfq/a/silent", "rfq", "A", "silent", "Skipped naming nothing"),
    Rule("ramp/b/elsewhere", "ramp", "B", "elsewhere", "Tested in an area not run"),
    Rule("v1/c/untested", "v1", "C", "untested", "No test anywhere"),
    Rule("v1/c/failed", "v1", "C", "failed", "Fails <b>loudly</b>"),
]


def _add(
    collector: ResultCollector,
    nodeid: str,
    rules: tuple[str, ...],
    outcome: str,
    *,
    reason: str = "",
    inherent: str | None = None,
    failure: str = "",
) -> None:
    props: list[tuple[str, str]] = [(RULES_PROPERTY, " ".join(rules))]
    if inherent:
        props.append((INHERENT_PROPERTY, inherent))
    collector.add(
        nodeid=nodeid,
        when="setup" if outcome == "skipped" else "call",
        outcome=outcome,
        properties=props,
        longrepr=("f.py", 1, f"Skipped: {reason}") if outcome == "skipped" else None,
        longreprtext=failure,
    )


def _matrix() -> dict[str, Any]:
    collector = ResultCollector()
    base = "http://127.0.0.1:1"
    _add(collector, f"{CONVENTIONS}::test_ok", ("rfq/a/passed",), "passed")
    _add(
        collector,
        f"{CONVENTIONS}::test_clock",
        ("rfq/a/clock", "rfq/a/mixed"),
        "skipped",
        reason=control_skip_message(base, "clock"),
        inherent="clock",
    )
    _add(
        collector,
        f"{CONVENTIONS}::test_portable",
        ("rfq/a/mixed",),
        "skipped",
        reason=control_skip_message(base, None),
    )
    _add(
        collector,
        f"{CONVENTIONS}::test_wallets",
        ("rfq/a/wallet",),
        "skipped",
        reason=skip_message("taker_wallet", "2 taker wallets (--taker-key HEX, repeated)"),
    )
    _add(collector, f"{CONVENTIONS}::test_silent", ("rfq/a/silent",), "skipped", reason="why")
    _add(
        collector,
        f"{CONVENTIONS}::test_<script>alert(1)</script>",
        ("v1/c/failed",),
        "failed",
        failure=(
            "E   AssertionError: POST http://h/v2/rfq/request -> 500 "
            "[X-Request-Id req_0123abcd]: expected 200: b'<img src=x onerror=alert(1)>'\n"
        ),
    )
    suite = {
        f"{CONVENTIONS}::test_ok": ["rfq/a/passed"],
        f"{AUTH}::test_elsewhere": ["ramp/b/elsewhere"],
    }
    return build_matrix(RULES, collector.results.values(), base_url=base, suite=suite)


def test_every_rule_ends_in_exactly_one_state_and_skips_have_a_kind() -> None:
    matrix = _matrix()
    by_id = {rule["id"]: rule for rule in matrix["rules"]}
    assert {rule_id: rule["status"] for rule_id, rule in by_id.items()} == {
        "rfq/a/passed": "passed",
        "rfq/a/clock": "skipped",
        "rfq/a/mixed": "skipped",
        "rfq/a/wallet": "skipped",
        "rfq/a/silent": "skipped",
        "ramp/b/elsewhere": "not_selected",  # its test is in an area this run left out
        "v1/c/untested": "not_covered",
        "v1/c/failed": "failed",
    }
    # Every test of it carries sim_only(because="clock"): inherent, with the reason named.
    assert by_id["rfq/a/clock"]["skip_kind"] == "inherent_control"
    assert by_id["rfq/a/clock"]["skip_reason"].startswith("clock: needs service time moved")
    # One of its tests could run without control: our debt, not inherent.
    assert by_id["rfq/a/mixed"]["skip_kind"] == "not_ported"
    assert "inherent_control" not in by_id["rfq/a/mixed"]
    assert by_id["rfq/a/wallet"]["skip_kind"] == "missing_input"
    assert by_id["rfq/a/wallet"]["needs"] == ["taker_wallet"]
    assert "--taker-key HEX" in by_id["rfq/a/wallet"]["skip_reason"]
    # A skip that names no input is not an input's fault: it counts as our debt.
    assert by_id["rfq/a/silent"]["skip_kind"] == "not_ported"
    assert by_id["ramp/b/elsewhere"]["not_selected_tests"] == [f"{AUTH}::test_elsewhere"]
    totals = matrix["totals"]
    assert {k: totals[k] for k in ("passed", "failed", "skipped", "not_covered")} == {
        "passed": 1,
        "failed": 1,
        "skipped": 4,
        "not_covered": 1,
    }
    assert (totals["not_selected"], totals["selected"], totals["rules"]) == (1, 6, 8)
    assert totals["skipped_by_kind"] == {
        "inherent_control": 1,
        "not_ported": 2,
        "missing_input": 1,
    }
    states = sum(totals[s] for s in ("passed", "failed", "skipped", "not_covered", "not_selected"))
    assert states == totals["rules"]
    # The share is over the selected rules that do not inherently need control: 5 of them.
    assert matrix["control_free"] == {"rules": 5, "passed": 1}
    skipped_tests = {t["nodeid"]: t.get("skip_kind") for t in matrix["tests"]}
    assert skipped_tests[f"{CONVENTIONS}::test_clock"] == "inherent_control"
    assert skipped_tests[f"{CONVENTIONS}::test_portable"] == "not_ported"


def test_tests_skipped_as_not_ported_are_counted_even_when_no_rule_is() -> None:
    """A test that could run without control but does not, beside one that decides the same
    rule: the rule is not not_ported, and the headline says why the test-level count is not 0."""
    collector = ResultCollector()
    base = "http://127.0.0.1:1"
    _add(collector, f"{CONVENTIONS}::test_ok", ("rfq/a/passed",), "passed")
    _add(
        collector,
        f"{CONVENTIONS}::test_portable",
        ("rfq/a/passed",),
        "skipped",
        reason=control_skip_message(base, None),
    )
    matrix = build_matrix(RULES[:1], collector.results.values(), base_url=base, suite={})
    lines = headline(matrix)
    assert lines[0].endswith("(inherent_control 0, missing_input 0, not_ported 0)")
    assert lines[1] == (
        "not_ported: 0 rules, though 1 tests are skipped as not ported yet: another test "
        "decides every rule they check"
    )


def test_the_headline_judges_only_the_selected_rules() -> None:
    lines = headline(_matrix())
    assert lines[0] == (
        "conventions: 1 of 6 rules passed, 1 failed, 4 skipped "
        "(inherent_control 1, missing_input 1, not_ported 2)"
    )
    assert lines[1].startswith("not_ported: 2 rules are our debt")
    assert "1 rules not selected" in lines[3]
    assert "1 rules not covered" in lines[3]
    assert lines[-1] == (
        "control-free: 1 of 5 selected rules that do not inherently need the control API "
        "passed (20.0 %)"
    )
    markdown = render_markdown(_matrix())
    assert "**conventions: 1 of 6 rules passed" in markdown
    assert "### missing_input: an input you can give would run it (1 rules)" in markdown
    assert "| `taker_wallet` |" in markdown
    assert "### not_ported: a test could run without control but does not yet" in markdown
    assert "| `clock` | needs service time moved" in markdown


@pytest.mark.parametrize(
    ("reason", "inherent", "kind"),
    [
        (control_skip_message("http://x", "faults"), "faults", "inherent_control"),
        (control_skip_message("http://x", None), None, "not_ported"),
        (skip_message("key:trades"), None, "missing_input"),
        (skip_message("time<=90s", "waits 90 s"), None, "missing_input"),
        ("the deployment's book has orders", None, "not_ported"),
        (None, "decision", "inherent_control"),
    ],
)
def test_skip_kind_of_one_test(reason: str | None, inherent: str | None, kind: str) -> None:
    assert skip_kind(reason, inherent) == kind


class _Page(HTMLParser):
    """What a browser would load and show: external references, rule rows, totals."""

    def __init__(self) -> None:
        super().__init__()
        self.external: list[str] = []
        self.rows: list[str] = []
        self.totals: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.scripts = 0
        self._cell: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("src", "href", "xlink:href"):
            if found.get(name):
                self.external.append(f"{tag} {name}={found[name]}")
        if tag == "link" or (tag == "script" and "src" in found):
            self.external.append(tag)
        if tag == "script":
            self.scripts += 1
        if tag == "tr" and "rule" in (found.get("class") or "").split():
            self.rows.append(str(found["data-rule-id"]))
        if tag == "td" and found.get("data-total"):
            self._cell = ("total", str(found["data-total"]))
        if tag == "td" and found.get("data-skip-kind"):
            self._cell = ("kind", str(found["data-skip-kind"]))

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            table = self.totals if self._cell[0] == "total" else self.kinds
            table[self._cell[1]] = data
            self._cell = None


def test_matrix_html_has_every_rule_once_and_the_totals_of_matrix_json(tmp_path: Path) -> None:
    matrix = _matrix()
    write_report(tmp_path, matrix)
    html = (tmp_path / "matrix.html").read_text(encoding="utf-8")
    saved = json.loads((tmp_path / "matrix.json").read_text(encoding="utf-8"))
    page = _Page()
    page.feed(html)
    assert sorted(page.rows) == sorted(rule["id"] for rule in saved["rules"])
    assert len(page.rows) == len(set(page.rows)) == saved["totals"]["rules"]
    for name in ("rules", "passed", "failed", "skipped", "not_covered", "not_selected"):
        assert int(page.totals[name]) == saved["totals"][name], name
    assert {k: int(v) for k, v in page.kinds.items()} == saved["totals"]["skipped_by_kind"]
    # Failures first, with the assertion message and the request id the failure named.
    assert page.rows[0] == "v1/c/failed"
    assert "req_0123abcd" in html
    # Self-contained: nothing loaded from elsewhere; one inline script (the filter).
    assert page.external == []
    assert page.scripts == 1
    # Escaped: a test name and an answer quoted in a failure are text, never markup.
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    assert "<b>loudly</b>" not in html
    assert "<svg" in html
    assert "Rules by state, per area of the suite" in html


def test_request_ids_are_read_from_the_suites_messages_and_quoted_bodies() -> None:
    text = (
        "GET http://h/x -> 404 [X-Request-Id req_1]: ... "
        "{'error': {'code': 'x', 'request_id': 'abc-2'}} [X-Request-Id req_1]"
    )
    assert request_ids(text) == ["req_1", "abc-2"]
    assert request_ids("") == []
    assert render_html(_matrix()).count("<tr class='rule") == len(RULES)


def test_an_area_row_is_judged_by_that_areas_tests_alone() -> None:
    """A rule checked from two areas: in a whole run the other area's test passes it, yet the
    row of the area whose test skipped shows it skipped, as a run of that area alone does."""
    base = "http://127.0.0.1:1"
    wallet = skip_message("taker_wallet", "2 taker wallets (--taker-key HEX, repeated)")

    def run(whole: bool) -> dict[str, Any]:
        collector = ResultCollector()
        _add(collector, f"{AUTH}::test_needs_wallets", ("rfq/a/wallet",), "skipped", reason=wallet)
        _add(collector, f"{AUTH}::test_ok", ("rfq/a/passed",), "passed")
        if whole:
            _add(collector, f"{CONVENTIONS}::test_also", ("rfq/a/wallet",), "passed")
        return build_matrix(RULES, collector.results.values(), base_url=base, suite={})

    whole, alone = run(whole=True), run(whole=False)
    rows = {row["area"]: row for row in whole["areas"]}
    assert next(r["status"] for r in whole["rules"] if r["id"] == "rfq/a/wallet") == "passed"
    assert rows["auth"]["rules_passed"] == 1
    assert rows["auth"]["rules_skipped"]["missing_input"] == 1
    assert rows["conventions"]["rules_passed"] == 1  # the same rule, by its own test there
    assert [row for row in alone["areas"] if row["area"] == "auth"] == [rows["auth"]]
