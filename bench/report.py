"""docs/performance.md: one section per benchmark, rewritten as a whole by each `just bench`.

A section may carry a chart drawn from its own figures (plain SVG, rfqkit/svg_chart.py): it is
written to ``docs/performance/<section slug>.svg`` beside the report and shown under the
section's introduction, so the picture and the table always come from the same run.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psutil

CHARTS_DIR = "performance"  # beside docs/performance.md


@dataclass
class Section:
    title: str
    intro: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    chart: str | None = None  # an SVG of this section's figures, where a picture reads faster

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")

    @property
    def chart_path(self) -> str:
        """Relative to the report: where the chart is written and linked from."""
        return f"{CHARTS_DIR}/{self.slug}.svg"

    def write_chart(self, report: Path) -> None:
        if self.chart is not None:
            target = report.parent / self.chart_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(self.chart + "\n", encoding="utf-8")

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", self.intro, ""]
        if self.chart is not None:
            lines += [f"![{self.title}]({self.chart_path})", ""]
        lines.append("| " + " | ".join(self.header) + " |")
        lines.append("|" + "---|" * len(self.header))
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        if self.notes:
            lines.append("")
            lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        f"{psutil.cpu_count(logical=True)} logical cores ({cpu}), "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def _split(text: str) -> tuple[str, dict[str, str]]:
    """A report's head, and its sections by title (each from its `## ` line)."""
    head, *parts = text.split("\n## ")
    return head, {part.split("\n", 1)[0]: "## " + part for part in parts}


def write(path: Path, sections: list[Section], command: str, keep: tuple[str, ...] = ()) -> None:
    """The whole report from this run's sections; an existing report's sections titled in
    ``keep`` (benchmarks this run skipped) are carried over as they are, stamp included."""
    kept = _split(path.read_text())[1] if path.exists() else {}
    carried = [kept[title].rstrip("\n") + "\n" for title in keep if title in kept]
    head = [
        "# Performance",
        "",
        f"Measured by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, on {machine()}.",
        "Every figure below comes from that one run; ratios compare against a baseline measured in",
        "the same run on the same machine, so they travel better than absolute numbers. Load",
        "generator and servers share the two cores, so absolute throughput is a floor. A section",
        "whose figures read faster as a picture carries a chart (plain SVG in performance/, drawn",
        "from that section's own run). The soak (`python -m bench --only soak-firm`, about 42",
        "minutes; docs/load-testing.md) runs only when named and keeps its own date.",
        "",
    ]
    body = [s.markdown() for s in sections] + carried
    path.write_text("\n".join(head) + "\n" + "\n".join(body))
    for section in sections:
        section.write_chart(path)


def update(path: Path, sections: list[Section], command: str) -> None:
    """Replace (or append) only these sections in an existing report; the others keep the
    figures of the run that measured them. Each replaced section says when and how it was run."""
    if not path.exists():
        write(path, sections, command)
        return
    head, existing = _split(path.read_text())
    stamp = f"Measured by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, on {machine()}."
    for section in sections:
        existing[section.title] = section.markdown().replace("\n\n", f"\n\n{stamp}\n\n", 1)
        section.write_chart(path)
    body = "\n".join(chunk.rstrip("\n") + "\n" for chunk in existing.values())
    path.write_text(head.rstrip("\n") + "\n\n" + body)
