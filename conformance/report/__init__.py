"""The run report's matrix: the results collected from pytest, and every spec rule with its
tests and a state, built here (`build_matrix`) and written by the package's other modules
(files.py: ``matrix.json``; markdown.py: ``matrix.md``; html.py: the page ``matrix.html``;
junit.py: every test as JUnit XML, ``junit.xml``, what CI systems read).

Every rule ends in exactly one state (:data:`STATES`): ``passed`` (a test passed, none failed),
``failed`` (a test failed), ``skipped`` (every test of it this run selected was skipped),
``not_covered`` (no test of the suite checks it) or ``not_selected`` (its tests exist but sit in
areas or ``-k`` selections this run left out). A skipped rule carries a ``skip_kind``
(conformance/wire/needs.py ``SKIP_KINDS``: ``inherent_control``, ``not_ported``, ``missing_input``)
and the reason. The headline judges only the selected rules (those with a test in this run), and
so does the control-free share. ``matrix.md`` opens with the headline and a summary per area,
then the failures with their full statements, the skipped rules by kind, then every rule.

Test results arrive as pytest reports (one per phase); under xdist they are the controller's
copies, so everything needed (the rule ids, the base URL) travels in ``user_properties``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from conformance.rules import Rule
from conformance.wire.areas import AREAS, area_of
from conformance.wire.needs import (
    INHERENT,
    INHERENT_CONTROL,
    MISSING_INPUT,
    NOT_PORTED,
    SKIP_KINDS,
    needs_in,
    skip_kind,
)
from rfqkit.timestamps import isoformat

RULES_PROPERTY = "spec_rules"  # user_properties key: space-separated rule ids
BASE_URL_PROPERTY = "conformance_base_url"  # user_properties key: the target's base URL
# user_properties key: why the test inherently needs the control API
# (conformance.wire.needs.INHERENT)
INHERENT_PROPERTY = "inherent_control"

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
NOT_COVERED, NOT_SELECTED = "not_covered", "not_selected"
STATES = (PASSED, FAILED, SKIPPED, NOT_COVERED, NOT_SELECTED)
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
    details: str = ""  # the failure's full text (JUnit), the reason is its telling line
    duration: float = 0.0  # seconds, all phases
    inherent: str | None = None  # why it inherently needs the control API (needs.INHERENT)

    def fold(
        self, when: str, outcome: str, reason: str | None, details: str = "", duration: float = 0
    ) -> None:
        self.phases.add(when)
        self.duration += duration
        if outcome == FAILED and details:
            self.details = (self.details + "\n\n" + details).strip()
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
        duration: float = 0.0,
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
            result = self.results[nodeid] = TestResult(
                nodeid,
                tuple(rule_text.split()),
                inherent=property_value(properties, INHERENT_PROPERTY),
            )
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
            details = longreprtext if outcome == FAILED else ""
            result.fold(when, outcome, reason, details, duration)

    def __bool__(self) -> bool:
        return bool(self.results)


def rule_status(outcomes: Sequence[str], *, elsewhere: bool = False) -> str:
    """A rule's state from the outcomes of its tests in this run; ``elsewhere``: the suite has
    tests of it that this run did not select."""
    if not outcomes:
        return NOT_SELECTED if elsewhere else NOT_COVERED
    if FAILED in outcomes:
        return FAILED
    if PASSED in outcomes:
        return PASSED
    return SKIPPED


def inherent_reasons(tests: Sequence[TestResult]) -> list[str]:
    """Why a rule inherently needs the control API: the reasons of its tests when every one of
    them has one (a rule with a single control-free test does not); [] otherwise."""
    if not tests or any(t.inherent is None for t in tests):
        return []
    return sorted({t.inherent for t in tests if t.inherent})


def test_skip_kind(test: TestResult) -> str | None:
    """The kind of a skipped test's skip (conformance.wire.needs.skip_kind), None unless skipped."""
    return skip_kind(test.reason, test.inherent) if test.outcome == SKIPPED else None


def rule_skip(tests: Sequence[TestResult]) -> tuple[str, str, list[str]]:
    """(skip kind, reason, needs) of a rule every test of which was skipped: inherent_control
    when every test needs control for an inherent reason; missing_input when an input the QA
    team can give would run one of them (the inputs named); else not_ported (our debt)."""
    kinds = [test_skip_kind(t) for t in tests]
    if all(k == INHERENT_CONTROL for k in kinds):
        reasons = sorted({t.inherent for t in tests if t.inherent})
        return INHERENT_CONTROL, "; ".join(f"{r}: {INHERENT[r]}" for r in reasons), []
    wanting = [t for t in tests if test_skip_kind(t) == MISSING_INPUT]
    needs = [n for n in needs_in(t.reason or "" for t in wanting) if n != "sim_control"]
    if needs:
        return MISSING_INPUT, "; ".join(dict.fromkeys(t.reason or "" for t in wanting)), needs
    reasons = list(dict.fromkeys(t.reason or "skipped without a reason" for t in tests))
    return NOT_PORTED, "; ".join(reasons), []


def build_matrix(
    rules: Sequence[Rule],
    results: Iterable[TestResult],
    *,
    base_url: str,
    generated_at: datetime | None = None,
    suite: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The JSON report: totals and every rule with its tests and state. ``suite`` maps every
    test of the suite (selected by this run or not) to its rule ids: a rule without a test in
    this run is ``not_selected`` when the suite has one, else ``not_covered``."""
    by_rule: dict[str, list[TestResult]] = {rule.id: [] for rule in rules}
    ordered = sorted(results, key=lambda r: r.nodeid)
    for result in ordered:
        for rule_id in result.rules:
            if rule_id in by_rule:
                by_rule[rule_id].append(result)
    ran = {t.nodeid for t in ordered}
    elsewhere: dict[str, list[str]] = {}
    for nodeid, rule_ids in sorted((suite or {}).items()):
        if nodeid not in ran:
            for rule_id in rule_ids:
                elsewhere.setdefault(rule_id, []).append(nodeid)
    entries: list[dict[str, Any]] = []
    totals: dict[str, Any] = {"rules": len(rules), **{state: 0 for state in STATES}}
    by_kind = {kind: 0 for kind in SKIP_KINDS}
    control_free = {"rules": 0, PASSED: 0}
    for rule in rules:
        tests = by_rule[rule.id]
        status = rule_status([t.outcome for t in tests], elsewhere=rule.id in elsewhere)
        totals[status] += 1
        inherent = inherent_reasons(tests)
        if status in (PASSED, FAILED, SKIPPED) and not inherent:
            control_free["rules"] += 1
            control_free[PASSED] += status == PASSED
        test_entries: list[dict[str, Any]] = []
        for test in tests:
            entry: dict[str, Any] = {
                "nodeid": test.nodeid,
                "area": area_of(test.nodeid),
                "outcome": test.outcome,
            }
            if test.reason:
                entry["reason"] = test.reason
            kind = test_skip_kind(test)
            if kind:
                entry["skip_kind"] = kind
            test_entries.append(entry)
        skipped: dict[str, Any] = {}
        if status == SKIPPED:
            kind, reason, needs = rule_skip(tests)
            by_kind[kind] += 1
            skipped = {
                "skip_kind": kind,
                "skip_reason": reason,
                **({"needs": needs} if needs else {}),
            }
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
                **skipped,
                **({"not_selected_tests": elsewhere[rule.id]} if status == NOT_SELECTED else {}),
                **({"inherent_control": inherent} if inherent else {}),
            }
        )
    stamp = (generated_at or datetime.now(UTC)).astimezone(UTC)
    selected = totals[PASSED] + totals[FAILED] + totals[SKIPPED]
    return {
        "generated_at": isoformat(stamp, timespec="auto"),
        "base_url": base_url,
        "totals": {
            **totals,
            "selected": selected,
            "skipped_by_kind": by_kind,
            "tests": len(ordered),
        },
        "control_free": control_free,
        "areas": area_summary(ordered, by_rule),
        "rules": entries,
        "tests": [
            {
                "nodeid": t.nodeid,
                "area": area_of(t.nodeid),
                "outcome": t.outcome,
                "rules": list(t.rules),
                "duration_s": round(t.duration, 3),
                **({"reason": t.reason} if t.reason else {}),
                **({"skip_kind": test_skip_kind(t)} if t.outcome == SKIPPED else {}),
                **({"details": t.details} if t.details else {}),
                **({"inherent_control": t.inherent} if t.inherent else {}),
            }
            for t in ordered
        ],
    }


def area_summary(
    results: Sequence[TestResult], by_rule: Mapping[str, Sequence[TestResult]]
) -> list[dict[str, Any]]:
    """Per area of the suite: its tests' outcomes and the states of the rules they check, each
    rule's state decided by that area's own tests (a rule checked from two areas counts in
    both, in each by its tests there), so a run of one area (`--only`) gives the row a whole
    run gives it; skipped rules by kind. Areas with failures first, then the order of
    conformance.wire.areas."""
    order = [*AREAS, "other"]
    summary: list[dict[str, Any]] = []
    for area in order:
        tests = [t for t in results if area_of(t.nodeid) == area]
        if not tests:
            continue
        own: dict[str, list[TestResult]] = {}
        for t in tests:
            for rule in t.rules:
                if rule in by_rule:
                    own.setdefault(rule, []).append(t)
        rule_ids = sorted(own)
        states = [(r, rule_status([t.outcome for t in own[r]])) for r in rule_ids]
        kinds = [rule_skip(own[r])[0] for r, state in states if state == SKIPPED]
        summary.append(
            {
                "area": area,
                "tests": len(tests),
                PASSED: sum(1 for t in tests if t.outcome == PASSED),
                FAILED: sum(1 for t in tests if t.outcome == FAILED),
                SKIPPED: sum(1 for t in tests if t.outcome == SKIPPED),
                "rules": len(rule_ids),
                "rules_passed": sum(1 for _, state in states if state == PASSED),
                "rules_failed": sum(1 for _, state in states if state == FAILED),
                "rules_skipped": {kind: kinds.count(kind) for kind in SKIP_KINDS},
            }
        )
    summary.sort(key=lambda row: (row[FAILED] == 0, order.index(row["area"])))
    return summary


KIND_LABEL = {
    INHERENT_CONTROL: "inherent_control: a real deployment does not let a client trigger it",
    MISSING_INPUT: "missing_input: an input you can give would run it",
    NOT_PORTED: "not_ported: a test could run without control but does not yet (our debt)",
}


def control_free_share(matrix: Mapping[str, Any]) -> float:
    """Percent of the selected rules that do not inherently need control which passed (0
    without any)."""
    free = matrix["control_free"]
    return 100.0 * free[PASSED] / free["rules"] if free["rules"] else 0.0


def selection(matrix: Mapping[str, Any]) -> str:
    """What the run selected: "all areas", or the areas whose tests ran."""
    if not matrix["totals"][NOT_SELECTED]:
        return "all areas"
    areas = [row["area"] for row in matrix.get("areas", [])]
    return ", ".join(a for a in [*AREAS, "other"] if a in areas) or "nothing"


def headline(matrix: Mapping[str, Any]) -> list[str]:
    """The verdict in a few lines, over the selected rules only (terminal and matrix.md)."""
    totals = matrix["totals"]
    kinds = totals["skipped_by_kind"]
    lines = [
        f"{selection(matrix)}: {totals[PASSED]} of {totals['selected']} rules passed, "
        f"{totals[FAILED]} failed, {totals[SKIPPED]} skipped "
        f"(inherent_control {kinds[INHERENT_CONTROL]}, missing_input {kinds[MISSING_INPUT]}, "
        f"not_ported {kinds[NOT_PORTED]})"
    ]
    tests_not_ported = sum(
        1
        for test in matrix.get("tests") or []
        if test.get("outcome") == SKIPPED and test.get("skip_kind") == NOT_PORTED
    )
    if kinds[NOT_PORTED]:
        lines.append(
            f"not_ported: {kinds[NOT_PORTED]} rules are our debt: a test of each could run "
            f"without the control API but does not yet ({tests_not_ported} tests)"
        )
    elif tests_not_ported:
        lines.append(
            f"not_ported: 0 rules, though {tests_not_ported} tests are skipped as not ported yet: "
            "another test decides every rule they check"
        )
    if kinds[MISSING_INPUT]:
        lines.append(
            f"missing_input: {kinds[MISSING_INPUT]} rules would run with an input you can give "
            "(see the report's skipped rules)"
        )
    left = []
    if totals[NOT_SELECTED]:
        left.append(
            f"{totals[NOT_SELECTED]} rules not selected (their tests are in areas or -k "
            "selections this run left out)"
        )
    if totals[NOT_COVERED]:
        left.append(f"{totals[NOT_COVERED]} rules not covered (no test checks them)")
    if left:
        lines.append("; ".join(left))
    free = matrix["control_free"]
    lines.append(
        f"control-free: {free[PASSED]} of {free['rules']} selected rules that do not inherently "
        f"need the control API passed ({control_free_share(matrix):.1f} %)"
    )
    return lines


def uncovered(matrix: Mapping[str, Any]) -> list[str]:
    return [rule["id"] for rule in matrix["rules"] if rule["status"] == NOT_COVERED]
