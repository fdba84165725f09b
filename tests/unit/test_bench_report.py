"""docs/performance.md and the charts beside it (bench/report.py): a section's chart is written
to performance/<slug>.svg and linked under its introduction, by a full and by a partial run."""

from __future__ import annotations

from pathlib import Path

from bench.report import Section, update, write


def _section(title: str, chart: str | None) -> Section:
    return Section(title, "intro", ("a", "b"), rows=[("1", "2")], chart=chart)


def test_charts_are_written_beside_the_report_and_linked(tmp_path: Path) -> None:
    report = tmp_path / "performance.md"
    write(report, [_section("Open loop: rates", "<svg>one</svg>"), _section("Plain", None)], "x")
    chart = tmp_path / "performance" / "open-loop-rates.svg"
    assert chart.read_text() == "<svg>one</svg>\n"
    text = report.read_text()
    assert "intro\n\n![Open loop: rates](performance/open-loop-rates.svg)\n\n| a | b |" in text
    assert text.count("![") == 1  # a section without a chart links none
    update(report, [_section("Open loop: rates", "<svg>two</svg>")], "python -m bench --only open")
    assert chart.read_text() == "<svg>two</svg>\n"
    text = report.read_text()
    assert text.count("performance/open-loop-rates.svg") == 1
    assert "## Plain" in text  # the other sections keep their figures


def test_a_full_run_keeps_the_sections_it_skipped_by_default(tmp_path: Path) -> None:
    report = tmp_path / "performance.md"
    write(report, [_section("Plain", None)], "just bench")
    update(report, [_section("Soak: long", "<svg>soak</svg>")], "python -m bench --only soak")
    write(report, [_section("Plain", None), _section("Other", None)], "just bench", ("Soak: long",))
    text = report.read_text()
    assert text.count("## Soak: long") == 1
    assert "Measured by `python -m bench --only soak`" in text  # its own stamp stays
    assert text.index("## Other") < text.index("## Soak: long")
    write(report, [_section("Plain", None)], "just bench")
    assert "## Soak: long" not in report.read_text()  # not kept unless asked
