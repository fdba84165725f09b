"""The simulator's own share of each answer time: is the load test measuring makers, or us?

The simulator sends ``Server-Timing: sim;dur=<ms>, makers;dur=<ms>`` on its responses (`sim`:
time inside the simulator; `makers`: the part of it the auction waited for makers' answers;
docs/decisions.md F23). Per request that splits the client's answer time into three parts:
the makers' wait (``makers``), what the simulator itself added (``sim - makers``) and what
happened outside the simulator (``latency - sim``: the network, the client, the accept queue).
Every node keeps exact 0.1 ms histograms of each part per request name; workers hand them to the
master with their stats.

The master prints the simulator-added figures and warns when their p99 over all requests is
clearly above ``--sim-added-warn-ms`` (default 10 ms): at least :data:`WARN_MARGIN` times it, so
a p99 of 10.2 ms against 10 is reported, not warned about. The warning names what was measured
(which request names added the time, how busy the simulator's process and the machine were, where
the fleet ran: :mod:`loadtests.machine`) and suggests only what is not already in place.

A target that sends no Server-Timing (the real service) simply has no rows here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rfqkit.server_timing import maker_waits, server_timing

STEPS_PER_MS = 10  # kept rounded up to 0.1 ms
DEFAULT_WARN_MS = 10.0
WARN_MARGIN = 1.5  # warn from 1.5 x the threshold: a clear margin, not measurement noise
PARTS = ("makers", "added", "outside")  # makers' wait, simulator-added, outside the simulator
BUSY_CORE_SHARE = 0.8  # the simulator's process on a core that much of the run: CPU-bound


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
    """One request name's milliseconds of one part (0.1 ms histogram)."""

    count: int = 0
    max_ms: float = 0.0
    histogram: Counter[str] = field(default_factory=Counter)

    def record(self, ms: float) -> None:
        self.count += 1
        self.max_ms = max(self.max_ms, ms)
        self.histogram[str(math.ceil(ms * STEPS_PER_MS))] += 1

    def merge(self, data: Mapping[str, Any]) -> None:
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
    """Per request name: the simulator-added milliseconds (``by_name``) and the split of each
    answer into the makers' wait, the simulator-added time and the time outside (``split``)."""

    by_name: dict[str, Added] = field(default_factory=dict)
    split: dict[str, dict[str, Added]] = field(default_factory=dict)
    # Per request name and maker: that maker's own wait in the auctions it was asked in
    # (Server-Timing `maker` entries), and how often it was the slowest of its auction.
    makers: dict[str, dict[str, Added]] = field(default_factory=dict)
    slowest: dict[str, Counter[str]] = field(default_factory=dict)

    def record(self, name: str, header: str | None, latency_ms: float | None = None) -> None:
        metrics = server_timing(header)
        if "sim" not in metrics:
            return
        waits = maker_waits(header)
        if waits:
            mine = self.makers.setdefault(name, {})
            for maker, ms in waits.items():
                mine.setdefault(maker, Added()).record(ms)
            self.slowest.setdefault(name, Counter())[max(waits, key=waits.__getitem__)] += 1
        makers = metrics.get("makers", 0.0)
        added = max(0.0, metrics["sim"] - makers)
        self.by_name.setdefault(name, Added()).record(added)
        parts = self.split.setdefault(name, {part: Added() for part in PARTS})
        parts["makers"].record(makers)
        parts["added"].record(added)
        if latency_ms is not None:
            parts["outside"].record(max(0.0, latency_ms - metrics["sim"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "added": {name: added.to_json() for name, added in self.by_name.items()},
            "split": {
                name: {part: a.to_json() for part, a in parts.items()}
                for name, parts in self.split.items()
            },
            "makers": {
                name: {maker: a.to_json() for maker, a in makers.items()}
                for name, makers in self.makers.items()
            },
            "slowest": {name: dict(counts) for name, counts in self.slowest.items()},
        }

    def merge(self, data: Mapping[str, Any]) -> None:
        for name, added in (data.get("added") or {}).items():
            self.by_name.setdefault(name, Added()).merge(added)
        for name, parts in (data.get("split") or {}).items():
            mine = self.split.setdefault(name, {part: Added() for part in PARTS})
            for part, added in parts.items():
                mine[part].merge(added)
        for name, makers in (data.get("makers") or {}).items():
            into = self.makers.setdefault(name, {})
            for maker, added in makers.items():
                into.setdefault(maker, Added()).merge(added)
        for name, counts in (data.get("slowest") or {}).items():
            self.slowest.setdefault(name, Counter()).update({m: int(n) for m, n in counts.items()})

    def total(self) -> Added:
        total = Added()
        for added in self.by_name.values():
            total.merge(added.to_json())
        return total

    def report(
        self, warn_ms: float, measured: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], list[str], bool]:
        """(figures for the summary, lines to print, whether to warn). ``measured``: what
        :mod:`loadtests.machine` saw of the simulator's process and the machine."""
        total = self.total()
        if total.count == 0:
            figures: dict[str, Any] = {"warn_ms": warn_ms, "warned": False, "all": None}
            return figures, summary_lines(figures), False
        overall = total.figures()
        figures = {
            "warn_ms": warn_ms,
            "warn_from_ms": round(warn_ms * WARN_MARGIN, 3),
            "warned": overall["p99_ms"] >= warn_ms * WARN_MARGIN,
            "all": overall,
            "by_name": {n: a.figures() for n, a in sorted(self.by_name.items())},
            "split": {
                name: {part: a.figures() for part, a in parts.items() if a.count}
                for name, parts in sorted(self.split.items())
            },
            "makers": {
                name: {
                    maker: {**a.figures(), "slowest": self.slowest.get(name, Counter())[maker]}
                    for maker, a in sorted(
                        makers.items(), key=lambda kv: -self.slowest.get(name, Counter())[kv[0]]
                    )
                }
                for name, makers in sorted(self.makers.items())
            },
            "measured": dict(measured or {}),
        }
        return figures, summary_lines(figures), bool(figures["warned"])


def causes(figures: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(what was measured, what to do about it) behind a warning: only suggestions for what is
    not already in place."""
    warn_ms = float(figures["warn_ms"])
    heavy = [
        f"{name} (p99 {row['p99_ms']} ms over {row['count']})"
        for name, row in sorted(figures["by_name"].items(), key=lambda kv: -kv[1]["p99_ms"])
        if row["p99_ms"] > warn_ms
    ]
    seen = [f"most of it on {', '.join(heavy[:3])}"] if heavy else []
    todo: list[str] = []
    measured = figures.get("measured") or {}
    share = measured.get("simulator_core_share")
    if share is not None:
        seen.append(f"the simulator's process used {share:.0%} of one core over the run")
        if share >= BUSY_CORE_SHARE:
            todo.append("offer less load (--users): the simulator's process is CPU-bound")
    load, cores = measured.get("load_average_1m"), measured.get("cores")
    if load is not None and cores:
        seen.append(f"the machine's load average was {load:.1f} on {cores} cores")
        if load > cores:
            todo.append(
                "run on a machine with idle cores, or the load generator elsewhere "
                "(--worker on another machine): the cores were oversubscribed"
            )
    fleet = measured.get("fleet")
    if fleet == "own":
        seen.append("the fleet already ran in its own process")
    elif fleet == "in":
        seen.append("the fleet ran inside the simulator's process")
        todo.append("run the fleet in its own process (--simulator-arg=--makers-process=own)")
    if not todo:
        todo.append(
            "compare with a quieter run; docs/performance.md says where the simulator's time goes"
        )
    return seen, todo


def maker_lines(makers: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Per request name with auctions: whose wait the makers' wait was. The slowest maker
    first (the one most often the last to answer its auction), then each maker's own wait."""
    lines = []
    for name, rows in makers.items():
        auctions = sum(int(row["slowest"]) for row in rows.values())
        if not auctions:
            continue
        first, top = next(iter(rows.items()))
        lines.append(
            f"makers' wait of {name}: mostly {first}'s, the slowest to answer in "
            f"{top['slowest']} of {auctions} auctions (its wait p50 {top['p50_ms']} ms, "
            f"p99 {top['p99_ms']} ms)"
        )
        for maker, row in rows.items():
            lines.append(
                f"    {maker}: asked in {row['count']}, wait p50 {row['p50_ms']} ms, "
                f"p99 {row['p99_ms']} ms, max {row['max_ms']} ms, slowest in {row['slowest']}"
            )
    return lines


def summary_lines(figures: Mapping[str, Any]) -> list[str]:
    """What the SLO report prints of the summary's `simulator_added` block."""
    overall = figures.get("all")
    if not overall:
        return ["simulator-added latency: the target sent no Server-Timing"]
    warn_ms = float(figures["warn_ms"])
    warn_from = float(figures.get("warn_from_ms", warn_ms))
    lines = [
        f"simulator-added latency (Server-Timing sim - makers): p99 {overall['p99_ms']} ms over "
        f"{overall['count']} requests (threshold {warn_ms:g} ms, warning from {warn_from:g} ms)"
    ]
    for name, row in figures["by_name"].items():
        lines.append(
            f"  {name}: {row['count']} requests, p50 {row['p50_ms']} ms, "
            f"p99 {row['p99_ms']} ms, max {row['max_ms']} ms"
        )
    lines += maker_lines(figures.get("makers") or {})
    if figures["warned"]:
        seen, todo = causes(figures)
        lines.append(
            f"WARNING: the simulator itself added {overall['p99_ms']} ms at p99 (threshold "
            f"{warn_ms:g} ms): these answer times are partly the simulator's (and the machine's), "
            f"not only your makers'. Measured: {'; '.join(seen)}. To do: {'; '.join(todo)}."
        )
    elif overall["p99_ms"] > warn_ms:
        lines.append(
            f"  (p99 {overall['p99_ms']} ms is above the {warn_ms:g} ms threshold but below "
            f"{warn_from:g} ms: within measurement noise, no warning)"
        )
    return lines
