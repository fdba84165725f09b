"""``matrix.md``: the run report (conformance/report/__init__.py ``build_matrix``) as Markdown. It
opens with the headline (the lines the terminal prints) and the totals, then a summary per area, the
failures with their full statements, the skipped rules by kind (for ``missing_input``, grouped by
exactly what would run them), then one table per spec document with every rule."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.report import (
    FAILED,
    KIND_LABEL,
    NOT_COVERED,
    NOT_SELECTED,
    PASSED,
    SKIPPED,
    control_free_share,
    headline,
)
from conformance.rules import DOCUMENTS
from conformance.wire.needs import HOW, INHERENT, INHERENT_CONTROL, MISSING_INPUT, NOT_PORTED

_STATUS_LABEL = {
    PASSED: "passed",
    FAILED: "**FAILED**",
    SKIPPED: "skipped",
    NOT_COVERED: "not covered",
    NOT_SELECTED: "not selected",
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _tests_cell(rule: Mapping[str, Any]) -> str:
    return "<br>".join(
        f"`{_cell(t['nodeid'])}` {t['outcome']}"
        + (f": {_cell(t['reason'])}" if t.get("reason") and t["outcome"] != PASSED else "")
        for t in rule["tests"]
    )


def _control_free_lines(matrix: Mapping[str, Any]) -> list[str]:
    free = matrix.get("control_free")
    if not free:
        return []
    share = f"{control_free_share(matrix):.1f} %" if free["rules"] else "-"
    by_reason: dict[str, int] = {}
    selected = [r for r in matrix["rules"] if r["status"] in (PASSED, FAILED, SKIPPED)]
    for rule in selected:
        for reason in rule.get("inherent_control", []):
            by_reason[reason] = by_reason.get(reason, 0) + 1
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(by_reason.items()))
    inherent = len(selected) - free["rules"]
    return [
        f"Selected rules that do not inherently need the control API: {free['rules']} "
        f"({inherent} do: {reasons or 'none'}); of those, passed: {free[PASSED]} ({share}).",
        "A rule inherently needs control when every test of it is `sim_only` with a reason "
        "(conformance/wire/needs.py INHERENT): a real deployment does not let a client trigger it.",
        "",
    ]


_NEEDS = re.compile(r"needs ([a-z_]+(?::[a-z0-9]+)?|time<=\d+s): (.*)$", re.DOTALL)


def _grouped(
    kind: str,
    rules: Sequence[Mapping[str, Any]],
    field: str,
    header: str,
    describe: Mapping[str, str],
) -> list[str]:
    """One kind's rules grouped by what each names in ``field`` (its inputs, its reasons)."""
    groups: dict[str, list[str]] = {}
    for rule in rules:
        for name in rule.get(field) or []:
            groups.setdefault(name, []).append(rule["id"])
    lines = [
        f"### {KIND_LABEL[kind]} ({len(rules)} rules)",
        "",
        f"| {header} | rules |",
        "|---|---|---|",
    ]
    for name, ids in sorted(groups.items(), key=lambda item: -len(item[1])):
        listed = "<br>".join(f"`{i}`" for i in ids)
        lines.append(f"| `{name}` | {_cell(describe.get(name, name))} | {len(ids)}: {listed} |")
    return [*lines, ""]


def wanted_inputs(rule: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What exactly would run a rule skipped for a missing input: (input, how to give it), as
    its skipped tests' own reasons say (a second key of the same partner, a key with one scope
    only, ...), not the input's general description."""
    found: dict[tuple[str, str], None] = {}
    for test in rule.get("tests") or []:
        if test.get("skip_kind") != MISSING_INPUT:
            continue
        reason = str(test.get("reason") or "")
        match = _NEEDS.match(reason)
        if match is not None and match.group(1) != "sim_control":
            found.setdefault((match.group(1), match.group(2)), None)
    return list(found)


def _wanted(rules: Sequence[Mapping[str, Any]]) -> list[str]:
    """The missing-input rules grouped by exactly what would run them (a rule whose tests want
    different things is under each)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for rule in rules:
        for wanted in wanted_inputs(rule) or [(n, HOW.get(n, n)) for n in rule.get("needs", [])]:
            groups.setdefault(wanted, []).append(rule["id"])
    lines = [
        f"### {KIND_LABEL[MISSING_INPUT]} ({len(rules)} rules)",
        "",
        "| input | what would run them | rules |",
        "|---|---|---|",
    ]
    for (need, how), ids in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        listed = "<br>".join(f"`{i}`" for i in ids)
        lines.append(f"| `{need}` | {_cell(how)} | {len(ids)}: {listed} |")
    return [*lines, ""]


def render_skipped(rules: Sequence[Mapping[str, Any]]) -> list[str]:
    """Markdown: the skipped rules by kind, each with what would run it or why nothing can."""
    skipped = [r for r in rules if r["status"] == SKIPPED]
    if not skipped:
        return []
    lines = ["## Skipped rules by kind", ""]
    wanting = [r for r in skipped if r.get("skip_kind") == MISSING_INPUT]
    if wanting:
        lines += _wanted(wanting)
    debt = [r for r in skipped if r.get("skip_kind") == NOT_PORTED]
    if debt:
        lines += [
            f"### {KIND_LABEL[NOT_PORTED]} ({len(debt)} rules)",
            "",
            "| rule | tests |",
            "|---|---|",
        ]
        lines += [f"| `{r['id']}` | {_tests_cell(r)} |" for r in debt]
        lines.append("")
    inherent = [r for r in skipped if r.get("skip_kind") == INHERENT_CONTROL]
    if inherent:
        header = "reason | what a client of a real deployment cannot do"
        lines += _grouped(INHERENT_CONTROL, inherent, "inherent_control", header, INHERENT)
    return lines


def render_markdown(matrix: Mapping[str, Any]) -> str:
    totals = matrix["totals"]
    lines = [
        "# Conformance matrix",
        "",
        f"Generated {matrix['generated_at']} against `{matrix['base_url']}`.",
        "",
        *[f"**{line}**" if i == 0 else line for i, line in enumerate(headline(matrix))],
        "",
        "| rules | passed | failed | skipped | not covered | not selected | tests |",
        "|---|---|---|---|---|---|---|",
        f"| {totals['rules']} | {totals[PASSED]} | {totals[FAILED]} | {totals[SKIPPED]} "
        f"| {totals[NOT_COVERED]} | {totals[NOT_SELECTED]} | {totals['tests']} |",
        "",
        "A rule fails if any of its tests failed, passes if at least one passed and none failed,",
        "is skipped if all its tests in this run were skipped, is not selected when its tests",
        "exist but this run left them out, and is not covered when no test checks it.",
        "Rules marked *(not shown)* record that the spec is silent (a simulator decision).",
        "Every test is also in `junit.xml`, and the whole report in `matrix.html`, next to this",
        "file.",
        "",
        *_control_free_lines(matrix),
        "## Summary by area",
        "",
        "Areas with failures first. An area's rules are judged by that area's tests alone (a",
        "rule checked from two areas counts in both, in each by its own tests there), so a run",
        "of one area (`--only`) gives the same row as a whole run.",
        "",
        "| area | tests | passed | failed | skipped | rules checked | rules passed "
        "| rules failed | rules skipped (inherent / input / not ported) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in matrix.get("areas", []):
        failed = f"**{row[FAILED]}**" if row[FAILED] else "0"
        kinds = row.get("rules_skipped") or {}
        lines.append(
            f"| {row['area']} | {row['tests']} | {row[PASSED]} | {failed} | {row[SKIPPED]} "
            f"| {row['rules']} | {row.get('rules_passed', '')} | {row['rules_failed']} "
            f"| {kinds.get(INHERENT_CONTROL, 0)} / {kinds.get(MISSING_INPUT, 0)} "
            f"/ {kinds.get(NOT_PORTED, 0)} |"
        )
    failed_rules = [rule for rule in matrix["rules"] if rule["status"] == FAILED]
    lines += [""]
    lines += [f"## Failures ({len(failed_rules)} rules)", ""]
    if not failed_rules:
        lines.append("No rule failed.")
    else:
        lines += ["| rule | tests | statement |", "|---|---|---|"]
        for rule in failed_rules:
            lines.append(f"| `{rule['id']}` | {_tests_cell(rule)} | {_cell(rule['text'])} |")
    lines += ["", *render_skipped(matrix["rules"])]
    sources = {key: name for name, key in DOCUMENTS.items()}
    for key in dict.fromkeys(rule["document"] for rule in matrix["rules"]):
        rules = [rule for rule in matrix["rules"] if rule["document"] == key]
        counts = {s: sum(1 for r in rules if r["status"] == s) for s in _STATUS_LABEL}
        lines += [
            f"## {key} ({sources.get(key, key)})",
            "",
            f"{len(rules)} rules: {counts[PASSED]} passed, {counts[FAILED]} failed, "
            f"{counts[SKIPPED]} skipped, {counts[NOT_COVERED]} not covered, "
            f"{counts[NOT_SELECTED]} not selected.",
            "",
            "| rule | status | tests | statement |",
            "|---|---|---|---|",
        ]
        for rule in rules:
            status = _STATUS_LABEL[rule["status"]]
            if rule.get("skip_kind"):
                status += f" ({rule['skip_kind']})"
            if rule["kind"] == "not_shown":
                status += " *(not shown)*"
            # The full statement: a reader should not have to open the spec to know the rule.
            lines.append(
                f"| `{rule['id']}` | {status} | {_tests_cell(rule)} | {_cell(rule['text'])} |"
            )
        lines.append("")
    return "\n".join(lines)
