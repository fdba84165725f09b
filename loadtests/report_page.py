"""``report.html``: a load run's own page, written by the master next to ``slo.json`` (locust's
page stays beside it as ``locust.html``). One self-contained file, plain HTML and SVG
(rfqkit/svg_chart.py), nothing fetched from elsewhere:

* the SLO verdict with every check's exact counts;
* a latency histogram per request name, with the reply budget marked on the judged ones;
* per request name, the split of the answer time into the makers' wait (Server-Timing
  ``makers``), the time the simulator itself added (``sim - makers``) and the time outside the
  simulator (client, network, queue): a slow maker and a slow simulator told apart at a glance;
* the simulator-added figures and, when it fired, the warning with its measured causes.

Built from the summary alone (``python -m loadtests.report_page DIR`` rebuilds it from
``DIR/slo.json``); everything shown is escaped.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loadtests.sim_added import summary_lines
from rfqkit.html_page import e, page
from rfqkit.svg_chart import PALETTE, Segment, histogram, nice_ticks, stacked_bars

MAX_BINS = 60
PART_LABELS = {
    "makers": "makers' wait",
    "added": "simulator-added",
    "outside": "outside the simulator",
}
PART_COLORS = {"makers": PALETTE[0], "added": PALETTE[1], "outside": PALETTE[7]}

STYLE = """
.pass { color: #060; font-weight: bold; } .fail { color: #b00; font-weight: bold; }
.warning { background: #fff4e0; border-left: 4px solid #e69f00; padding: 6px 10px; }
"""


def bins(counts: Mapping[str, int]) -> list[tuple[float, float, int]]:
    """Whole-millisecond counts regrouped into at most :data:`MAX_BINS` equal bins from 0."""
    if not counts:
        return []
    values = {int(k): int(v) for k, v in counts.items()}
    top = max(values)
    width = max(nice_ticks(top / MAX_BINS, 1)[-1], 1.0)
    grouped: dict[int, int] = {}
    for ms, n in values.items():
        index = max(math.ceil(ms / width) - 1, 0)  # ms is rounded up: (low, high] as [low, high)
        grouped[index] = grouped.get(index, 0) + n
    return [(i * width, (i + 1) * width, grouped.get(i, 0)) for i in range(max(grouped) + 1)]


def _checks(summary: Mapping[str, Any]) -> str:
    rows = []
    for check in summary.get("checks", []):
        passed = bool(check["passed"])
        mark = "<span class='pass'>pass</span>" if passed else "<span class='fail'>FAIL</span>"
        rows.append(
            f"<tr data-check='{e(check['name'])}'><td>{mark}</td><td>{e(check['name'])}</td>"
            f"<td>{e(check['observed'])}</td><td>{e(check['limit'])}</td>"
            f"<td>{e(check['detail'])}</td></tr>"
        )
    return (
        "<table id='checks'><tr><th>verdict</th><th>check</th><th>observed</th><th>limit</th>"
        f"<th>exact counts</th></tr>{''.join(rows)}</table>"
    )


def _histograms(summary: Mapping[str, Any]) -> list[str]:
    slo = summary.get("slo", {})
    judged = set(slo.get("judged_requests", []))
    budget = slo.get("budget_ms")
    out = []
    for name, row in (summary.get("figures", {}).get("by_name") or {}).items():
        counts = row.get("histogram_ms") or {}
        marked = name in judged and budget is not None
        chart = histogram(
            bins(counts),
            title=f"{name}: {row['requests']} answers by latency",
            x_label="answer time, ms (client-measured)",
            marker=float(budget) if marked else None,
            marker_label=f"reply budget {budget:g} ms" if marked else "",
        )
        out.append(f"<figure data-histogram='{e(name)}'>{chart}</figure>")
    return out


def split_chart(split: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """Per request name, p50 and p99 of each part of the answer time, side by side."""
    rows = []
    for name, parts in split.items():
        for quantile in ("p50_ms", "p99_ms"):
            segments = [
                Segment(PART_LABELS[part], float(parts[part][quantile]), PART_COLORS[part])
                for part in PART_LABELS
                if part in parts
            ]
            rows.append((f"{name} {quantile[:3]}", segments))
    return stacked_bars(
        rows,
        title="Where the answer time went, per request name (each part's own percentile)",
        label_width=300,
        width=900,
        unit=" ms",
    )


def _makers(makers: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Per request name with auctions, each maker's own wait and how often it was the slowest
    to answer (Server-Timing `maker` entries), the slowest first."""
    out = []
    for name, rows in makers.items():
        auctions = sum(int(row["slowest"]) for row in rows.values())
        if not auctions:
            continue
        cells = "".join(
            f"<tr data-maker='{e(maker)}'><td>{e(maker)}</td><td>{e(row['count'])}</td>"
            f"<td>{e(row['p50_ms'])}</td><td>{e(row['p99_ms'])}</td><td>{e(row['max_ms'])}</td>"
            f"<td>{e(row['slowest'])} of {auctions}</td></tr>"
            for maker, row in rows.items()
        )
        out.append(
            f"<table class='makers' data-request='{e(name)}'><caption>The makers' wait of "
            f"{e(name)}, per maker</caption><tr><th>maker</th><th>asked in</th>"
            "<th>wait p50, ms</th><th>wait p99, ms</th><th>max, ms</th>"
            f"<th>slowest to answer</th></tr>{cells}</table>"
        )
    return out


def render_page(summary: Mapping[str, Any]) -> str:
    added = summary.get("simulator_added") or {}
    verdict = "PASSED" if summary.get("passed") else "FAILED"
    facts = [
        ("profile", summary.get("profile")),
        ("target", summary.get("host")),
        ("mode", f"{summary.get('mode')} ({summary.get('workers')} workers)"),
        ("users / shape", f"{summary.get('users')} / {summary.get('shape')}"),
        ("from / to", f"{summary.get('started_at')} / {summary.get('stopped_at')}"),
    ]
    split = added.get("split") or {}
    lines = summary_lines(added) if added else []
    warning = [line for line in lines if line.startswith("WARNING")]
    plain = [line for line in lines if not line.startswith("WARNING")]
    body = [
        f"<h1>Load run {e(summary.get('profile'))}: <span id='verdict' "
        f"class='{'pass' if summary.get('passed') else 'fail'}'>SLO {verdict}</span> "
        f"(exit {e(summary.get('exit_code'))})</h1>",
        "<table>"
        + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in facts)
        + "</table>",
        "<h2>The verdict, check by check</h2>",
        _checks(summary),
        "<h2>Makers' wait against the simulator's own time</h2>",
    ]
    if split:
        body.append(f"<figure id='split'>{split_chart(split)}</figure>")
    else:
        body.append("<p id='split'>The target sent no Server-Timing: no split.</p>")
    body += _makers(added.get("makers") or {})
    body += [f"<p class='warning' id='warning'>{e(line)}</p>" for line in warning]
    body.append("<pre id='simulator-added'>" + e("\n".join(plain)) + "</pre>")
    body.append("<h2>Latency per request name</h2>")
    body += _histograms(summary)
    return page(f"Load run {summary.get('profile')}: {verdict}", body, style=STYLE)


def write_page(path: Path, summary: Mapping[str, Any]) -> Path:
    path.write_text(render_page(summary), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m loadtests.report_page REPORT_DIR", file=sys.stderr)
        return 2
    directory = Path(args[0])
    summary = json.loads((directory / "slo.json").read_text(encoding="utf-8"))
    print(write_page(directory / "report.html", summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
