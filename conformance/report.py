"""The run report: every spec rule with its tests and a status (``matrix.json`` + ``matrix.md``).

Test results arrive as pytest reports (one per phase); under xdist they are the controller's
copies, so everything needed (the rule ids, the base URL) travels in ``user_properties``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance.rules import DOCUMENTS, Rule

RULES_PROPERTY = "spec_rules"  # user_properties key: space-separated rule ids
BASE_URL_PROPERTY = "conformance_base_url"  # user_properties key: the target's base URL

PASSED, FAILED, SKIPPED, NOT_COVERED = "passed", "failed", "skipped", "not_covered"
_SEVERITY = {PASSED: 0, SKIPPED: 1, FAILED: 2}
_REASON_LIMIT = 300


@dataclass
class TestResult:
    """One test's outcome, folded over its setup, call and teardown phases."""

    __test__ = False  # not a pytest test class

    nodeid: str
    rules: tuple[str, ...]
    outcome: str = PASSED
    reason: str | None = None
    phases: set[str] = field(default_factory=set)

    def fold(self, when: str, outcome: str, reason: str | None) -> None:
        self.phases.add(when)
        # A failure anywhere wins; a skip beats a pass (a skipped call has a passed setup).
        if _SEVERITY[outcome] > _SEVERITY[self.outcome] or (
            outcome == self.outcome and reason and not self.reason
        ):
            self.outcome, self.reason = outcome, reason


def property_value(properties: Iterable[Any], name: str) -> str | None:
    """Look a key up in ``user_properties`` (tuples, or lists after xdist transport)."""
    for entry in properties:
        if isinstance(entry, tuple | list) and len(entry) == 2 and entry[0] == name:
            return str(entry[1])
    return None


def _short(text: str, limit: int = _REASON_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def skip_reason(longrepr: Any) -> str | None:
    """The message of a skip report (``(path, line, "Skipped: why")``)."""
    if isinstance(longrepr, tuple | list) and len(longrepr) == 3:
        message = str(longrepr[2])
        return _short(message.removeprefix("Skipped: "))
    return _short(str(longrepr)) if longrepr else None


def failure_reason(longreprtext: str) -> str:
    """The most telling line of a failure: the last ``E`` line, else the last line."""
    lines = [line for line in longreprtext.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    if errors:
        return _short(" ".join(errors[:2]))
    return _short(lines[-1]) if lines else "failed"


class ResultCollector:
    """Accumulates spec-marked test results from ``pytest_runtest_logreport``."""

    def __init__(self) -> None:
        self.results: dict[str, TestResult] = {}
        self.base_urls: set[str] = set()

    def add(
        self,
        *,
        nodeid: str,
        when: str,
        outcome: str,
        properties: Iterable[Any],
        longrepr: Any = None,
        longreprtext: str = "",
        wasxfail: str | None = None,
    ) -> None:
        properties = list(properties)
        rule_text = property_value(properties, RULES_PROPERTY)
        if not rule_text:
            return
        base_url = property_value(properties, BASE_URL_PROPERTY)
        if base_url:
            self.base_urls.add(base_url)
        result = self.results.get(nodeid)
        if result is None:
            result = self.results[nodeid] = TestResult(nodeid, tuple(rule_text.split()))
        reason: str | None = None
        if wasxfail is not None:
            # Expected failures count as skipped (the rule is known not to hold yet);
            # an unexpected pass of a strict xfail is reported by pytest as failed.
            if outcome == SKIPPED:
                reason = _short(f"xfail: {wasxfail}" if wasxfail else "xfail")
            elif outcome == PASSED:
                outcome, reason = SKIPPED, _short(f"xpass: {wasxfail}")
        elif outcome == SKIPPED:
            reason = skip_reason(longrepr)
        elif outcome == FAILED:
            prefix = "" if when == "call" else f"error in {when}: "
            reason = prefix + failure_reason(longreprtext)
        if outcome in _SEVERITY:
            result.fold(when, outcome, reason)

    def __bool__(self) -> bool:
        return bool(self.results)


def rule_status(outcomes: Sequence[str]) -> str:
    if not outcomes:
        return NOT_COVERED
    if FAILED in outcomes:
        return FAILED
    if PASSED in outcomes:
        return PASSED
    return SKIPPED


def build_matrix(
    rules: Sequence[Rule],
    results: Iterable[TestResult],
    *,
    base_url: str,
    generated_at: datetime | None = None,
) -> dict[str, Any]:
    """The JSON report: totals and every rule with its tests and status."""
    by_rule: dict[str, list[TestResult]] = {rule.id: [] for rule in rules}
    ordered = sorted(results, key=lambda r: r.nodeid)
    for result in ordered:
        for rule_id in result.rules:
            if rule_id in by_rule:
                by_rule[rule_id].append(result)
    entries: list[dict[str, Any]] = []
    totals = {"rules": len(rules), PASSED: 0, FAILED: 0, SKIPPED: 0, NOT_COVERED: 0}
    for rule in rules:
        tests = by_rule[rule.id]
        status = rule_status([t.outcome for t in tests])
        totals[status] += 1
        test_entries: list[dict[str, Any]] = []
        for test in tests:
            entry: dict[str, Any] = {"nodeid": test.nodeid, "outcome": test.outcome}
            if test.reason:
                entry["reason"] = test.reason
            test_entries.append(entry)
        entries.append(
            {
                "id": rule.id,
                "document": rule.document,
                "source": rule.source,
                "line": rule.line,
                "section": rule.section,
                "text": rule.text,
                "kind": rule.kind,
                "status": status,
                "tests": test_entries,
            }
        )
    stamp = (generated_at or datetime.now(UTC)).astimezone(UTC)
    return {
        "generated_at": stamp.isoformat().replace("+00:00", "Z"),
        "base_url": base_url,
        "totals": {**totals, "tests": len(ordered)},
        "rules": entries,
    }


_STATUS_LABEL = {
    PASSED: "passed",
    FAILED: "**FAILED**",
    SKIPPED: "skipped",
    NOT_COVERED: "not covered",
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown(matrix: Mapping[str, Any]) -> str:
    totals = matrix["totals"]
    lines = [
        "# Conformance matrix",
        "",
        f"Generated {matrix['generated_at']} against `{matrix['base_url']}`.",
        "",
        "| rules | passed | failed | skipped | not covered | tests |",
        "|---|---|---|---|---|---|",
        f"| {totals['rules']} | {totals[PASSED]} | {totals[FAILED]} | {totals[SKIPPED]} "
        f"| {totals[NOT_COVERED]} | {totals['tests']} |",
        "",
        "A rule fails if any of its tests failed, passes if at least one passed and none failed,",
        "is skipped if all its tests were skipped, and is not covered without tests.",
        "Rules marked *(not shown)* record that the spec is silent (a simulator decision).",
        "",
    ]
    sources = {key: name for name, key in DOCUMENTS.items()}
    for key in dict.fromkeys(rule["document"] for rule in matrix["rules"]):
        rules = [rule for rule in matrix["rules"] if rule["document"] == key]
        counts = {s: sum(1 for r in rules if r["status"] == s) for s in _STATUS_LABEL}
        lines += [
            f"## {key} ({sources.get(key, key)})",
            "",
            f"{len(rules)} rules: {counts[PASSED]} passed, {counts[FAILED]} failed, "
            f"{counts[SKIPPED]} skipped, {counts[NOT_COVERED]} not covered.",
            "",
            "| rule | status | tests | statement |",
            "|---|---|---|---|",
        ]
        for rule in rules:
            status = _STATUS_LABEL[rule["status"]]
            if rule["kind"] == "not_shown":
                status += " *(not shown)*"
            tests = "<br>".join(
                f"`{_cell(t['nodeid'])}` {t['outcome']}"
                + (f": {_cell(t['reason'])}" if t.get("reason") and t["outcome"] != PASSED else "")
                for t in rule["tests"]
            )
            statement = _cell(rule["text"])
            if len(statement) > 120:
                statement = statement[:119] + "…"
            lines.append(f"| `{rule['id']}` | {status} | {tests} | {statement} |")
        lines.append("")
    return "\n".join(lines)


def write_report(directory: Path, matrix: Mapping[str, Any]) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "matrix.json"
    md_path = directory / "matrix.md"
    json_path.write_text(json.dumps(matrix, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(matrix), encoding="utf-8")
    return json_path, md_path


def uncovered(matrix: Mapping[str, Any]) -> list[str]:
    return [rule["id"] for rule in matrix["rules"] if rule["status"] == NOT_COVERED]
