"""docs/performance.md: one section per benchmark, rewritten as a whole by each `just bench`."""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psutil


@dataclass
class Section:
    title: str
    intro: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", self.intro, ""]
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


def write(path: Path, sections: list[Section], command: str) -> None:
    head = [
        "# Performance",
        "",
        f"Measured by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, on {machine()}.",
        "Every figure below comes from that one run; ratios compare against a baseline measured in",
        "the same run on the same machine, so they travel better than absolute numbers. Load",
        "generator and servers share the two cores, so absolute throughput is a floor.",
        "",
    ]
    path.write_text("\n".join(head) + "\n" + "\n".join(s.markdown() for s in sections))


def update(path: Path, sections: list[Section], command: str) -> None:
    """Replace (or append) only these sections in an existing report; the others keep the
    figures of the run that measured them. Each replaced section says when and how it was run."""
    if not path.exists():
        write(path, sections, command)
        return
    text = path.read_text()
    head, *parts = text.split("\n## ")
    existing = {part.split("\n", 1)[0]: "## " + part for part in parts}
    stamp = f"Measured by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, on {machine()}."
    for section in sections:
        existing[section.title] = section.markdown().replace("\n\n", f"\n\n{stamp}\n\n", 1)
    body = "\n".join(chunk.rstrip("\n") + "\n" for chunk in existing.values())
    path.write_text(head.rstrip("\n") + "\n\n" + body)
