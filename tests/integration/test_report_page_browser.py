"""matrix.html in a real browser (Debian's chromium): a run that selected part of the suite
opens on the rules it selected; "every rule" shows the rest."""

from __future__ import annotations

from pathlib import Path

from conformance.report import RULES_PROPERTY, ResultCollector, build_matrix
from conformance.report.files import write_report
from conformance.rules import Rule
from tests.integration.browser import chromium

RULES = [
    Rule("rfq/a/passed", "rfq", "A", "passed", "Passes"),
    Rule("rfq/a/failed", "rfq", "A", "failed", "Fails"),
    Rule("ramp/b/elsewhere", "ramp", "B", "elsewhere", "Tested in an area not run"),
]
CONVENTIONS = "conformance/tests/test_conventions.py"


def _report(tmp_path: Path, *, elsewhere_selected: bool) -> Path:
    collector = ResultCollector()
    for name, rule, outcome in (
        ("ok", "rfq/a/passed", "passed"),
        ("bad", "rfq/a/failed", "failed"),
    ):
        collector.add(
            nodeid=f"{CONVENTIONS}::test_{name}",
            when="call",
            outcome=outcome,
            properties=[(RULES_PROPERTY, rule)],
            longrepr=None,
            longreprtext="E   AssertionError: no" if outcome == "failed" else "",
        )
    # The ramp rule's test sits in a module this run did not collect: not selected.
    suite = {"conformance/tests/test_auth_keys.py::test_elsewhere": ["ramp/b/elsewhere"]}
    if elsewhere_selected:
        suite = {}
    matrix = build_matrix(RULES, collector.results.values(), base_url="http://h", suite=suite)
    directory = tmp_path / ("all" if elsewhere_selected else "part")
    write_report(directory, matrix)
    return directory / "matrix.html"


def _shown(page_url: str, tmp_path: Path, choose: str | None = None) -> tuple[str, list[str]]:
    with chromium(tmp_path / "profile") as context:
        page = context.new_page()
        page.goto(page_url)
        if choose is not None:
            page.select_option("#state", choose)
        value = page.eval_on_selector("#state", "s => s.value")
        shown = page.eval_on_selector_all(
            "tr.rule", "rows => rows.filter(r => !r.hidden).map(r => r.dataset.ruleId)"
        )
        return str(value), sorted(shown)


def test_a_partial_run_opens_on_its_selected_rules(tmp_path: Path) -> None:
    page = _report(tmp_path, elsewhere_selected=False).as_uri()
    assert _shown(page, tmp_path) == ("selected", ["rfq/a/failed", "rfq/a/passed"])
    assert _shown(page, tmp_path, "all")[1] == [
        "ramp/b/elsewhere",
        "rfq/a/failed",
        "rfq/a/passed",
    ]


def test_a_whole_run_opens_on_every_rule(tmp_path: Path) -> None:
    page = _report(tmp_path, elsewhere_selected=True).as_uri()
    value, shown = _shown(page, tmp_path)
    assert value == "all"
    assert len(shown) == 3
