"""Plain SVG charts written by the project (docs/decisions.md QA1): stacked horizontal bars,
a histogram with a marked threshold, and lines over a numeric axis. No charting library and no
script: each function returns one standalone ``<svg>`` element, usable inline in a
self-contained HTML page (the conformance and load reports) or written as an ``.svg`` file
(docs/performance/). Every text that reaches the output is escaped, since labels can come from
a service under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

FONT = "font-family='system-ui, sans-serif' font-size='12'"
AXIS = "#555"
GRID = "#ddd"
# Colour-blind-safe palette (Okabe-Ito), in the order series are usually given.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#999")


@dataclass(frozen=True)
class Segment:
    """One part of a stacked bar."""

    label: str
    value: float
    color: str


@dataclass(frozen=True)
class Series:
    """One line: ``points`` are (x, y); a y of None leaves a gap."""

    name: str
    points: Sequence[tuple[float, float | None]]
    color: str
    dashed: bool = False


def text(value: object) -> str:
    """Escaped for SVG/HTML text and attribute values."""
    return escape(str(value), quote=True)


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``high`` (1, 2, 2.5 or 5 times a power of ten)."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [i * step for i in range(math.ceil(high / step - 1e-9) + 1)]


def _number(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.3g}"


def _open(width: int, height: int, title: str) -> list[str]:
    return [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='{text(title)}'>",
        f"<title>{text(title)}</title>",
        f"<rect width='{width}' height='{height}' fill='#fff'/>",
        f"<text x='8' y='18' {FONT} font-weight='bold'>{text(title)}</text>",
    ]


def _legend_rows(items: Sequence[tuple[str, str]], width: float) -> list[list[tuple[str, str]]]:
    """The legend's entries wrapped into rows that fit ``width``."""
    rows: list[list[tuple[str, str]]] = [[]]
    used = 0.0
    for label, color in items:
        span = 24 + 7 * len(label)
        if used + span > width and rows[-1]:
            rows.append([])
            used = 0.0
        rows[-1].append((label, color))
        used += span
    return rows


def _legend(
    items: Sequence[tuple[str, str]],
    x: float,
    y: float,
    width: float,
    dashed: frozenset[str] | None = None,
) -> list[str]:
    """Colour keys and labels in wrapped rows; with ``dashed`` (the labels of dashed lines)
    each key is a short line, solid or dashed, as the series is drawn."""
    out: list[str] = []
    for index, row in enumerate(_legend_rows(items, width)):
        cx, cy = x, y + 18 * index
        for label, color in row:
            if dashed is None:
                out.append(
                    f"<rect x='{cx:.1f}' y='{cy - 10:.1f}' width='12' height='12' fill='{color}'/>"
                )
            else:
                dash = " stroke-dasharray='4 3'" if label in dashed else ""
                out.append(
                    f"<line x1='{cx:.1f}' x2='{cx + 14:.1f}' y1='{cy - 4:.1f}' "
                    f"y2='{cy - 4:.1f}' stroke='{color}' stroke-width='2'{dash}/>"
                )
            out.append(f"<text x='{cx + 18:.1f}' y='{cy:.1f}' {FONT}>{text(label)}</text>")
            cx += 24 + 7 * len(label)
    return out


def log_ticks(low: float, high: float) -> list[float]:
    """1, 2 and 5 times the powers of ten, from the last at or below ``low`` to the first at or
    above ``high`` (both > 0); at least two."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1
    candidates = [m * 10.0**e for e in range(first, last + 1) for m in (1, 2, 5)]
    below = max((c for c in candidates if c <= low), default=candidates[0])
    above = min((c for c in candidates if c >= high), default=candidates[-1])
    ticks = [c for c in candidates if below <= c <= above]
    return ticks if len(ticks) > 1 else [ticks[0], candidates[candidates.index(ticks[0]) + 1]]


def _y_grid(
    ticks: Sequence[float], py: Callable[[float], float], left: float, right: float
) -> list[str]:
    """A grid line and a label at each tick of the vertical axis."""
    out = []
    for tick in ticks:
        y = py(tick)
        out.append(f"<line x1='{left}' x2='{right}' y1='{y:.1f}' y2='{y:.1f}' stroke='{GRID}'/>")
        out.append(
            f"<text x='{left - 6}' y='{y + 4:.1f}' text-anchor='end' {FONT}>"
            f"{text(_number(tick))}</text>"
        )
    return out


def stacked_bars(
    rows: Sequence[tuple[str, Sequence[Segment]]],
    *,
    title: str,
    width: int = 760,
    label_width: int = 170,
    unit: str = "",
) -> str:
    """One horizontal bar per row, its segments side by side, each with its value; a legend of
    every segment label seen. The scale is shared by all rows."""
    bar_h, gap, top = 18, 8, 34
    legend: dict[str, str] = {}
    for _, segments in rows:
        for segment in segments:
            legend.setdefault(segment.label, segment.color)
    legend_rows = len(_legend_rows(list(legend.items()), width - 16))
    height = top + len(rows) * (bar_h + gap) + 18 * legend_rows + 16
    out = _open(width, height, title)
    high = max((sum(s.value for s in segs) for _, segs in rows), default=0.0) or 1.0
    plot = width - label_width - 60
    y = top
    for label, segments in rows:
        out.append(
            f"<text x='{label_width - 6}' y='{y + 13}' text-anchor='end' {FONT}>"
            f"{text(label)}</text>"
        )
        x = float(label_width)
        for segment in segments:
            if segment.value <= 0:
                continue
            w = plot * segment.value / high
            out.append(
                f"<rect x='{x:.1f}' y='{y}' width='{max(w, 1):.1f}' height='{bar_h}' "
                f"fill='{segment.color}'><title>{text(segment.label)}: "
                f"{text(_number(segment.value))}{text(unit)}</title></rect>"
            )
            if w > 22:
                out.append(
                    f"<text x='{x + w / 2:.1f}' y='{y + 13}' text-anchor='middle' fill='#fff' "
                    f"{FONT}>{text(_number(segment.value))}</text>"
                )
            x += w
        total = sum(s.value for s in segments)
        out.append(
            f"<text x='{x + 4:.1f}' y='{y + 13}' {FONT}>{text(_number(total))}{text(unit)}</text>"
        )
        y += bar_h + gap
    out += _legend(list(legend.items()), 8, y + 14, width - 16)
    out.append("</svg>")
    return "\n".join(out)


def histogram(
    bins: Sequence[tuple[float, float, int]],
    *,
    title: str,
    x_label: str,
    marker: float | None = None,
    marker_label: str = "",
    width: int = 760,
    height: int = 260,
    color: str = PALETTE[0],
) -> str:
    """Counts per bin (``[low, high)``, count) as columns over a numeric axis, with a dashed
    vertical ``marker`` line (a budget) when given."""
    left, right, top, bottom = 56, 16, 30, 44
    out = _open(width, height, title)
    if not bins:
        out.append(f"<text x='{left}' y='{top + 30}' {FONT}>no samples</text></svg>")
        return "\n".join(out)
    low = min(b[0] for b in bins)
    high = max([b[1] for b in bins] + ([marker * 1.05] if marker is not None else []))
    x_ticks = nice_ticks(high - low if low > 0 else high)
    span = (x_ticks[-1] if low <= 0 else max(high - low, 1e-9)) or 1.0
    start = 0.0 if low <= 0 else low
    top_count = max(b[2] for b in bins)
    y_ticks = nice_ticks(float(top_count), 4)
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(value: float) -> float:
        return left + plot_w * (value - start) / span

    def py(count: float) -> float:
        return top + plot_h * (1 - count / y_ticks[-1])

    out += _y_grid(y_ticks, py, left, width - right)
    for b_low, b_high, count in bins:
        if count:
            x0, x1 = px(b_low), px(b_high)
            out.append(
                f"<rect x='{x0:.1f}' y='{py(count):.1f}' width='{max(x1 - x0 - 0.5, 0.8):.1f}' "
                f"height='{top + plot_h - py(count):.1f}' fill='{color}'><title>"
                f"{text(_number(b_low))}-{text(_number(b_high))}: {count}</title></rect>"
            )
    for tick in x_ticks:
        value = start + tick if low > 0 else tick
        if value > start + span + 1e-9:
            continue
        out.append(
            f"<text x='{px(value):.1f}' y='{top + plot_h + 16}' text-anchor='middle' {FONT}>"
            f"{text(_number(value))}</text>"
        )
    out.append(
        f"<line x1='{left}' x2='{width - right}' y1='{top + plot_h}' y2='{top + plot_h}' "
        f"stroke='{AXIS}'/>"
    )
    out.append(
        f"<text x='{left + plot_w / 2:.1f}' y='{height - 8}' text-anchor='middle' {FONT}>"
        f"{text(x_label)}</text>"
    )
    if marker is not None:
        out.append(
            f"<line x1='{px(marker):.1f}' x2='{px(marker):.1f}' y1='{top}' y2='{top + plot_h}' "
            f"stroke='{PALETTE[3]}' stroke-width='2' stroke-dasharray='6 4'/>"
        )
        out.append(
            f"<text x='{px(marker) - 4:.1f}' y='{top + 12}' text-anchor='end' "
            f"fill='{PALETTE[3]}' {FONT}>{text(marker_label)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out)


def lines(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    width: int = 760,
    height: int = 320,
    guides: Sequence[tuple[float, str]] = (),
    log_y: bool = False,
) -> str:
    """Lines with points over numeric axes (x from 0; y from 0, or logarithmic with ``log_y``
    when the values span decades, as latencies past saturation do), a legend, and dashed
    horizontal ``guides`` (value, label) such as a target."""
    left, right, top = 64, 16, 30
    legend_rows = len(_legend_rows([(s.name, s.color) for s in series], width - 16))
    bottom = 46 + 18 * legend_rows
    height += 18 * (legend_rows - 1)
    out = _open(width, height, title)
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points if y is not None] + [g[0] for g in guides]
    x_ticks = nice_ticks(max(xs, default=1.0))
    positive = [y for y in ys if y > 0] or [1.0]
    y_ticks = log_ticks(min(positive), max(positive)) if log_y else nice_ticks(max(ys, default=1.0))
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(value: float) -> float:
        return left + plot_w * value / x_ticks[-1]

    def py(value: float) -> float:
        if log_y:
            low, high = math.log10(y_ticks[0]), math.log10(y_ticks[-1])
            share = (math.log10(max(value, y_ticks[0])) - low) / (high - low)
            return top + plot_h * (1 - share)
        return top + plot_h * (1 - value / y_ticks[-1])

    out += _y_grid(y_ticks, py, left, width - right)
    for tick in x_ticks:
        out.append(
            f"<text x='{px(tick):.1f}' y='{top + plot_h + 16}' text-anchor='middle' {FONT}>"
            f"{text(_number(tick))}</text>"
        )
    out.append(
        f"<line x1='{left}' x2='{width - right}' y1='{top + plot_h}' y2='{top + plot_h}' "
        f"stroke='{AXIS}'/>"
    )
    out.append(f"<line x1='{left}' x2='{left}' y1='{top}' y2='{top + plot_h}' stroke='{AXIS}'/>")
    out.append(
        f"<text x='{left + plot_w / 2:.1f}' y='{top + plot_h + 34}' text-anchor='middle' "
        f"{FONT}>{text(x_label)}</text>"
    )
    out.append(
        f"<text x='14' y='{top + plot_h / 2:.1f}' text-anchor='middle' {FONT} "
        f"transform='rotate(-90 14 {top + plot_h / 2:.1f})'>{text(y_label)}</text>"
    )
    for value, label in guides:
        out.append(
            f"<line x1='{left}' x2='{width - right}' y1='{py(value):.1f}' y2='{py(value):.1f}' "
            f"stroke='{PALETTE[3]}' stroke-dasharray='6 4'/>"
        )
        out.append(
            f"<text x='{width - right - 4}' y='{py(value) - 4:.1f}' text-anchor='end' "
            f"fill='{PALETTE[3]}' {FONT}>{text(label)}</text>"
        )
    for line in series:
        dash = " stroke-dasharray='4 3'" if line.dashed else ""
        run: list[str] = []
        for x, y in [*line.points, (0.0, None)]:
            if y is None:
                if len(run) > 1:
                    out.append(
                        f"<polyline points='{' '.join(run)}' fill='none' stroke='{line.color}' "
                        f"stroke-width='2'{dash}/>"
                    )
                run = []
                continue
            run.append(f"{px(x):.1f},{py(y):.1f}")
            out.append(
                f"<circle cx='{px(x):.1f}' cy='{py(y):.1f}' r='3' fill='{line.color}'><title>"
                f"{text(line.name)}: {text(_number(x))}, {text(_number(y))}</title></circle>"
            )
    legend_top = top + plot_h + 52
    dashed = frozenset(s.name for s in series if s.dashed)
    out += _legend([(s.name, s.color) for s in series], 8, legend_top, width - 16, dashed)
    out.append("</svg>")
    return "\n".join(out)
