"""The project's plain SVG charts (rfqkit/svg_chart.py): well-formed SVG, every label escaped,
axes that cover the data, legends that wrap inside the picture."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rfqkit.svg_chart import Segment, Series, histogram, lines, log_ticks, nice_ticks, stacked_bars

SVG = "{http://www.w3.org/2000/svg}"


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def test_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(37) == [0, 10, 20, 30, 40]
    assert nice_ticks(0) == [0.0, 1.0]
    assert nice_ticks(1.3, 1)[-1] == 2
    assert log_ticks(11.8, 17490) == [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]
    assert log_ticks(100, 100) == [100, 200]


def test_labels_from_a_service_are_text_not_markup() -> None:
    bars = stacked_bars(
        [("<script>x</script>", [Segment("a & b", 3, "#000"), Segment("<i>", 1, "#111")])],
        title="t <b>",
    )
    root = _parse(bars)  # would not parse with a raw < in a label
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "<script>x</script>" in texts
    assert "a & b" in texts
    assert "<script>" not in bars
    assert not list(root.iter(f"{SVG}script"))


def test_a_histogram_marks_its_threshold_and_lines_fit_their_legend() -> None:
    root = _parse(
        histogram(
            [(0, 10, 3), (10, 20, 0), (740, 750, 9)],
            title="h",
            x_label="ms",
            marker=750,
            marker_label="reply budget 750 ms",
        )
    )
    assert "reply budget 750 ms" in [t.text for t in root.iter(f"{SVG}text")]
    assert len([r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]) == 2
    many = [
        Series(f"series number {i}", [(50, 10.0 * i + 1), (100, None)], "#000") for i in range(8)
    ]
    chart = _parse(lines(many, title="l", x_label="x", y_label="y", log_y=True))
    height = float(chart.get("height", "0"))
    legend_y = [
        float(t.get("y", "0")) for t in chart.iter(f"{SVG}text") if "series" in (t.text or "")
    ]
    assert max(legend_y) < height  # wrapped rows stay inside the picture
    assert not list(chart.iter(f"{SVG}polyline"))  # one point per series: no line to draw
