"""``matrix.html``: the conformance report as one self-contained page (no external asset, no
CDN: usable offline and attachable to a CI run). A bar per area (rules passed, failed, skipped
by kind) drawn in plain SVG (rfqkit/svg_chart.py), the headline, and a table of every rule
(its state, the spec's file and line, its full statement, its tests with their outcomes),
failures first with the assertion message and the request id the failure named; a few lines
of inline script filter the table by state and text. Everything shown is escaped: test names,
reasons and assertion messages carry what a service under test answered.
"""

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
    STATES,
    headline,
)
from conformance.wire.needs import INHERENT_CONTROL, MISSING_INPUT, NOT_PORTED, SKIP_KINDS
from rfqkit.html_page import e, page
from rfqkit.svg_chart import PALETTE, Segment, stacked_bars

COLORS = {
    PASSED: PALETTE[2],
    FAILED: PALETTE[3],
    MISSING_INPUT: PALETTE[1],
    NOT_PORTED: PALETTE[4],
    INHERENT_CONTROL: PALETTE[7],
    NOT_COVERED: "#000",
    NOT_SELECTED: "#ccc",
}
# Failures first, then what a QA lead can act on, then the rest.
ORDER = [FAILED, NOT_PORTED, MISSING_INPUT, INHERENT_CONTROL, PASSED, NOT_COVERED, NOT_SELECTED]
_REQUEST_ID = re.compile(r"(?:X-Request-Id |['\"]request_id['\"]: ?['\"])([A-Za-z0-9_.:\-]+)")

STYLE = """
table { width: 100%; }
#rules { table-layout: fixed; } #rules td { overflow-wrap: anywhere; }
#rules th:nth-child(1) { width: 20%; } #rules th:nth-child(2) { width: 16%; }
#rules th:nth-child(3) { width: 8%; } #rules th:nth-child(4) { width: 26%; }
.state { font-weight: bold; }
.failed .state { color: #b00; } .passed .state { color: #060; }
ul.tests { margin: 0; padding-left: 1.1em; } code { font-size: 0.92em; }
pre { margin: 0.3em 0; background: #fff4f0; padding: 4px; }
.filters { margin: 0.8em 0; } .filters label { margin-right: 1em; }
#totals td, #totals th { text-align: right; }
"""

SCRIPT = """
(function () {
  var state = document.getElementById('state');
  var words = document.getElementById('words');
  var rows = document.querySelectorAll('tr.rule');
  var shown = document.getElementById('shown');
  function apply() {
    var want = state.value, text = words.value.toLowerCase(), count = 0;
    rows.forEach(function (row) {
      var match = (want === 'all' || row.dataset.state === want || row.dataset.kind === want
                   || (want === 'selected' && row.dataset.state !== 'not_selected'))
        && (!text || row.textContent.toLowerCase().indexOf(text) !== -1);
      row.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = count;
  }
  state.addEventListener('change', apply);
  words.addEventListener('input', apply);
  apply();
})();
"""


def _some_not_selected(matrix: Mapping[str, Any]) -> bool:
    return any(rule.get("status") == NOT_SELECTED for rule in matrix.get("rules") or [])


def request_ids(details: str) -> list[str]:
    """The request ids a failure's text names (``X-Request-Id ...`` from the suite's messages,
    ``'request_id': '...'`` from an error body it quoted), in order, once each."""
    return list(dict.fromkeys(_REQUEST_ID.findall(details or "")))


def _bucket(rule: Mapping[str, Any]) -> str:
    return str(rule.get("skip_kind") or rule["status"])


def chart(matrix: Mapping[str, Any]) -> str:
    """Every rule's state in one bar, then (on a scale of their own) a bar per area of the rules
    its tests check."""
    totals = matrix["totals"]
    kinds = totals["skipped_by_kind"]

    def segments(passed: int, failed: int, by_kind: Mapping[str, int]) -> list[Segment]:
        return [
            Segment("passed", passed, COLORS[PASSED]),
            Segment("failed", failed, COLORS[FAILED]),
            *[Segment(f"skipped: {k}", by_kind.get(k, 0), COLORS[k]) for k in SKIP_KINDS],
        ]

    every: list[tuple[str, Sequence[Segment]]] = [
        (
            "all rules",
            [
                *segments(totals[PASSED], totals[FAILED], kinds),
                Segment("not covered", totals[NOT_COVERED], COLORS[NOT_COVERED]),
                Segment("not selected", totals[NOT_SELECTED], COLORS[NOT_SELECTED]),
            ],
        )
    ]
    areas: list[tuple[str, Sequence[Segment]]] = [
        (
            f"{row['area']} ({row['rules']})",
            segments(row.get("rules_passed", 0), row["rules_failed"], row["rules_skipped"]),
        )
        for row in matrix.get("areas", [])
    ]
    return stacked_bars(every, title="Every rule by state", unit=" rules") + stacked_bars(
        areas, title="Rules by state, per area of the suite", unit=" rules"
    )


def _tests_cell(rule: Mapping[str, Any], details: Mapping[str, str]) -> str:
    items = []
    for test in rule["tests"]:
        line = f"<code>{e(test['nodeid'])}</code> {e(test['outcome'])}"
        if test.get("skip_kind"):
            line += f" ({e(test['skip_kind'])})"
        if test["outcome"] == FAILED:
            line += f"<pre>{e(test.get('reason', ''))}</pre>"
            ids = request_ids(details.get(test["nodeid"], ""))
            if ids:
                line += "request id: " + ", ".join(f"<code>{e(i)}</code>" for i in ids)
        elif test.get("reason") and test["outcome"] != PASSED:
            line += f": {e(test['reason'])}"
        items.append(f"<li>{line}</li>")
    for nodeid in rule.get("not_selected_tests", []):
        items.append(f"<li><code>{e(nodeid)}</code> not selected</li>")
    return f"<ul class='tests'>{''.join(items)}</ul>" if items else "no test"


def _rows(matrix: Mapping[str, Any]) -> list[str]:
    details = {t["nodeid"]: t.get("details", "") for t in matrix.get("tests", [])}
    ordered = sorted(matrix["rules"], key=lambda r: ORDER.index(_bucket(r)))
    rows = []
    for rule in ordered:
        state = rule["status"]
        label = state.replace("_", " ")
        if rule.get("skip_kind"):
            label += f": {rule['skip_kind']}"
        reason = f"<div>{e(rule['skip_reason'])}</div>" if rule.get("skip_reason") else ""
        not_shown = " <em>(not shown)</em>" if rule.get("kind") == "not_shown" else ""
        rows.append(
            f"<tr class='rule {e(state)}' data-rule-id='{e(rule['id'])}' "
            f"data-state='{e(state)}' data-kind='{e(rule.get('skip_kind') or '')}'>"
            f"<td><code>{e(rule['id'])}</code></td>"
            f"<td><span class='state'>{e(label)}</span>{not_shown}{reason}</td>"
            f"<td>{e(rule.get('source', ''))}:{e(rule.get('line', ''))}</td>"
            f"<td class='statement'>{e(rule['text'])}</td>"
            f"<td>{_tests_cell(rule, details)}</td></tr>"
        )
    return rows


def _totals(matrix: Mapping[str, Any]) -> str:
    totals = matrix["totals"]
    names = ["rules", *STATES, "selected", "tests"]
    head = "".join(f"<th>{e(n.replace('_', ' '))}</th>" for n in names)
    cells = "".join(f"<td data-total='{e(n)}'>{e(totals[n])}</td>" for n in names)
    kinds = "".join(
        f"<td data-skip-kind='{e(k)}'>{e(totals['skipped_by_kind'][k])}</td>" for k in SKIP_KINDS
    )
    kind_head = "".join(f"<th>skipped: {e(k)}</th>" for k in SKIP_KINDS)
    return f"<table id='totals'><tr>{head}{kind_head}</tr><tr>{cells}{kinds}</tr></table>"


def render_html(matrix: Mapping[str, Any]) -> str:
    # A run that selected part of the suite (--only, -k) opens on the rules it selected.
    options = [("selected", "every rule this run selected")] if _some_not_selected(matrix) else []
    options += [("all", "every rule")]
    options += [(s, s.replace("_", " ")) for s in (FAILED, PASSED, SKIPPED)]
    options += [(k, f"skipped: {KIND_LABEL[k]}") for k in SKIP_KINDS]
    options += [(NOT_COVERED, "not covered"), (NOT_SELECTED, "not selected")]
    select = "".join(f"<option value='{e(v)}'>{e(t)}</option>" for v, t in options)
    lines = "".join(f"<li>{e(line)}</li>" for line in headline(matrix))
    return page(
        "Conformance report",
        [
            "<h1>Conformance report</h1>",
            f"<p>Generated {e(matrix['generated_at'])} against "
            f"<code>{e(matrix['base_url'])}</code>.</p>",
            f"<ul id='headline'>{lines}</ul>",
            _totals(matrix),
            f"<h2>Rules by state</h2>{chart(matrix)}",
            "<h2>Rules</h2>",
            "<div class='filters'><label>show <select id='state'>"
            f"{select}</select></label><label>containing <input id='words' type='search' "
            "placeholder='rule id, test, reason, text'></label><span id='shown'></span> "
            "rules shown</div>",
            "<table id='rules'><thead><tr><th>rule</th><th>state</th><th>spec</th>"
            "<th>statement</th><th>tests</th></tr></thead><tbody>",
            *_rows(matrix),
            "</tbody></table>",
        ],
        style=STYLE,
        script=SCRIPT,
    )
