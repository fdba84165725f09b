"""The simulator's own share of each answer time: is the load test measuring makers, or us?

The simulator sends ``Server-Timing: sim;dur=<ms>, makers;dur=<ms>`` on its responses (`sim`:
time inside the simulator; `makers`: the part of it the auction waited for makers' answers;
docs/decisions.md). ``sim - makers`` is what the simulator itself added to the request. Every
node keeps exact 0.1 ms histograms of it per request name; workers hand them to the master
with their stats, and the master prints them and warns when the p99 over all requests is above
``--sim-added-warn-ms`` (default 10 ms): past that, reply times say as much about the simulator
(and the machine it shares) as about the makers under test.

A target that sends no Server-Timing (the real service) simply has no rows here.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rfqkit.server_timing import server_timing

STEPS_PER_MS = 10  # kept rounded up to 0.1 ms
DEFAULT_WARN_MS = 10.0


def added_ms(header: str | None) -> float | None:
    """The simulator-added milliseconds of one response, None without a `sim` timing."""
    metrics = server_timing(header)
    if "sim" not in metrics:
        return None
    return max(0.0, metrics["sim"] - metrics.get("makers", 0.0))


def quantile(histogram: Counter[str], count: int, percentile: float, highest: float) -> float:
    """Nearest-rank percentile of a 0.1 ms histogram (keys: steps as strings)."""
    rank = max(math.ceil(Fraction(count) * Fraction(str(percentile)) / 100), 1)
    seen = 0
    for step in sorted(int(k) for k in histogram):
        seen += histogram[str(step)]
        if seen >= rank:
            return step / STEPS_PER_MS
    return highest


@dataclass
class Added:
    """One request name's simulator-added milliseconds."""

    count: int = 0
    max_ms: float = 0.0
    histogram: Counter[str] = field(default_factory=Counter)

    def record(self, ms: float) -> None:
        self.count += 1
        self.max_ms = max(self.max_ms, ms)
        self.histogram[str(math.ceil(ms * STEPS_PER_MS))] += 1

    def merge(self, data: dict[str, Any]) -> None:
        self.count += int(data["count"])
        self.max_ms = max(self.max_ms, float(data["max_ms"]))
        for step, n in data["histogram"].items():
            self.histogram[step] += int(n)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "max_ms": self.max_ms, "histogram": dict(self.histogram)}

    def figures(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "p50_ms": quantile(self.histogram, self.count, 50, self.max_ms),
            "p99_ms": quantile(self.histogram, self.count, 99, self.max_ms),
            "max_ms": round(self.max_ms, 3),
        }


@dataclass
class SimAdded:
    """Simulator-added milliseconds per request name, and over all of them."""

    by_name: dict[str, Added] = field(default_factory=dict)

    def record(self, name: str, header: str | None) -> None:
        ms = added_ms(header)
        if ms is not None:
            self.by_name.setdefault(name, Added()).record(ms)

    def to_json(self) -> dict[str, Any]:
        return {name: added.to_json() for name, added in self.by_name.items()}

    def merge(self, data: dict[str, Any]) -> None:
        for name, added in data.items():
            self.by_name.setdefault(name, Added()).merge(added)

    def total(self) -> Added:
        total = Added()
        for added in self.by_name.values():
            total.merge(added.to_json())
        return total

    def report(self, warn_ms: float) -> tuple[dict[str, Any], list[str], bool]:
        """(figures for the summary, lines to print, whether to warn)."""
        total = self.total()
        if total.count == 0:
            figures: dict[str, Any] = {"warn_ms": warn_ms, "warned": False, "all": None}
            return figures, summary_lines(figures), False
        overall = total.figures()
        figures = {
            "warn_ms": warn_ms,
            "warned": overall["p99_ms"] > warn_ms,
            "all": overall,
            "by_name": {n: a.figures() for n, a in sorted(self.by_name.items())},
        }
        return figures, summary_lines(figures), bool(figures["warned"])


def summary_lines(figures: dict[str, Any]) -> list[str]:
    """What the SLO report prints of the summary's `simulator_added` block."""
    overall = figures.get("all")
    if not overall:
        return ["simulator-added latency: the target sent no Server-Timing"]
    warn_ms = figures["warn_ms"]
    lines = [
        f"simulator-added latency (Server-Timing sim - makers): p99 {overall['p99_ms']} ms over "
        f"{overall['count']} requests (warning above {warn_ms:g} ms)"
    ]
    for name, row in figures["by_name"].items():
        lines.append(
            f"  {name}: {row['count']} requests, p50 {row['p50_ms']} ms, "
            f"p99 {row['p99_ms']} ms, max {row['max_ms']} ms"
        )
    if figures["warned"]:
        lines.append(
            f"WARNING: the simulator itself added {overall['p99_ms']} ms at p99 (more than "
            f"{warn_ms:g} ms): these answer times are partly the simulator's (and the machine's), "
            "not only your makers'. Lower the load, give the simulator a core of its own, or run "
            "the fleet in its own process (docs/performance.md)."
        )
    return lines
