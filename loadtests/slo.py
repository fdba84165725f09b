"""Exact SLO accounting.

Locust's statistics round response times between 100 and 999 ms to 10 ms buckets, so its p99
cannot tell 751 ms from 759 ms, right where the 750 ms reply budget sits. Every node therefore
counts each response itself from the ``request`` event, with the exact latency: how many judged
responses took longer than the budget and than budget + tolerance, a 0.1 ms histogram for the
percentiles shown, errors, and no_quote answers. Workers send their counts to the master with
each stats report; the master alone judges the merged counts at quitting and sets the exit code.

"p99 <= threshold" is decided on counts: with n judged responses, the nearest-rank p-th
percentile is within the threshold exactly when no more than ``n - ceil(n * p / 100)`` of them
took longer than it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from loadtests.sim_added import SimAdded

HISTOGRAM_STEPS_PER_MS = 10  # judged latencies are kept rounded up to 0.1 ms
QUANTILES = (50.0, 90.0, 99.0, 99.9)


def allowed_over(count: int, percentile: float) -> int:
    """How many of ``count`` samples may exceed a limit while the nearest-rank ``percentile``
    stays within it."""
    if count <= 0:
        return 0
    rank = math.ceil(Fraction(count) * Fraction(str(percentile)) / 100)
    return count - max(rank, 1)


def _merge_counter(into: Counter[str], other: dict[str, int]) -> None:
    for key, value in other.items():
        into[key] += int(value)


@dataclass
class NameCounts:
    requests: int = 0
    errors: int = 0
    over_threshold: int = 0
    no_quote: int = 0
    max_ms: float = 0.0
    # Every answer's latency in whole milliseconds (rounded up): the report's histogram.
    histogram: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "errors": self.errors,
            "over_threshold": self.over_threshold,
            "no_quote": self.no_quote,
            "max_ms": round(self.max_ms, 3),
            "histogram_ms": dict(self.histogram),
        }

    def merge(self, data: dict[str, Any]) -> None:
        self.requests += int(data["requests"])
        self.errors += int(data["errors"])
        self.over_threshold += int(data["over_threshold"])
        self.no_quote += int(data["no_quote"])
        self.max_ms = max(self.max_ms, float(data["max_ms"]))
        _merge_counter(self.histogram, data.get("histogram_ms") or {})


@dataclass
class Tally:
    """One node's exact counts (since its last report, on a worker; in total, on the master)."""

    budget_ms: float
    threshold_ms: float
    requests: int = 0
    errors: int = 0
    judged: int = 0  # responses to the requests the budget applies to
    over_budget: int = 0  # judged, latency > budget_ms (exact)
    over_threshold: int = 0  # judged, latency > budget_ms + tolerance (exact)
    max_ms: float = 0.0  # judged
    histogram: Counter[str] = field(default_factory=Counter)  # judged, 0.1 ms steps (rounded up)
    answered: int = 0  # 200 answers carrying data.status (quoted | preview | no_quote)
    no_quote: int = 0
    no_quote_reasons: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)  # "429 rate_limited", …
    by_name: dict[str, NameCounts] = field(default_factory=dict)
    counters: Counter[str] = field(default_factory=Counter)  # profile-specific counts
    maxima: dict[str, float] = field(default_factory=dict)  # profile-specific highest values
    sim_added: SimAdded = field(default_factory=SimAdded)  # Server-Timing sim - makers, per name

    def record(
        self,
        name: str,
        latency_ms: float,
        *,
        judged: bool,
        error: str | None,
        status: str | None,
        no_quote_reason: str | None = None,
    ) -> None:
        entry = self.by_name.setdefault(name, NameCounts())
        self.requests += 1
        entry.requests += 1
        # Per name: the slowest answer of every request (a cancel is not judged against the
        # reply budget, but its 90 ms is still its 90 ms); the top-level max is judged only.
        entry.max_ms = max(entry.max_ms, latency_ms)
        entry.histogram[str(math.ceil(latency_ms))] += 1
        if error is not None:
            self.errors += 1
            entry.errors += 1
            self.error_kinds[error] += 1
        if judged:
            self.judged += 1
            self.max_ms = max(self.max_ms, latency_ms)
            self.histogram[str(math.ceil(latency_ms * HISTOGRAM_STEPS_PER_MS))] += 1
            if latency_ms > self.budget_ms:
                self.over_budget += 1
            if latency_ms > self.threshold_ms:
                self.over_threshold += 1
                entry.over_threshold += 1
        if status is not None:
            self.answered += 1
            if status == "no_quote":
                self.no_quote += 1
                entry.no_quote += 1
                self.no_quote_reasons[no_quote_reason or "unknown"] += 1

    def count(self, counter: str, amount: int = 1) -> None:
        self.counters[counter] += amount

    def observe_max(self, name: str, value: float) -> None:
        self.maxima[name] = max(self.maxima.get(name, value), value)

    def to_json(self) -> dict[str, Any]:
        return {
            "budget_ms": self.budget_ms,
            "threshold_ms": self.threshold_ms,
            "requests": self.requests,
            "errors": self.errors,
            "judged": self.judged,
            "over_budget": self.over_budget,
            "over_threshold": self.over_threshold,
            "max_ms": self.max_ms,
            "histogram": dict(self.histogram),
            "answered": self.answered,
            "no_quote": self.no_quote,
            "no_quote_reasons": dict(self.no_quote_reasons),
            "error_kinds": dict(self.error_kinds),
            "by_name": {k: v.to_json() for k, v in self.by_name.items()},
            "counters": dict(self.counters),
            "maxima": dict(self.maxima),
            "sim_added": self.sim_added.to_json(),
        }

    def drain(self) -> dict[str, Any]:
        """The counts so far as JSON, and start again from zero (a worker's report)."""
        data = self.to_json()
        fresh = Tally(self.budget_ms, self.threshold_ms)
        self.__dict__.update(fresh.__dict__)
        return data

    def merge(self, data: dict[str, Any]) -> None:
        """Add another node's drained counts (the master, from a worker's report)."""
        if float(data["threshold_ms"]) != self.threshold_ms:
            raise ValueError(
                f"a worker judged against {data['threshold_ms']} ms, the master {self.threshold_ms}"
            )
        for name in ("requests", "errors", "judged", "over_budget", "over_threshold", "answered"):
            setattr(self, name, getattr(self, name) + int(data[name]))
        self.no_quote += int(data["no_quote"])
        self.max_ms = max(self.max_ms, float(data["max_ms"]))
        _merge_counter(self.histogram, data["histogram"])
        _merge_counter(self.no_quote_reasons, data["no_quote_reasons"])
        _merge_counter(self.error_kinds, data["error_kinds"])
        _merge_counter(self.counters, data["counters"])
        for name, value in data["maxima"].items():
            self.observe_max(name, float(value))
        for name, counts in data["by_name"].items():
            self.by_name.setdefault(name, NameCounts()).merge(counts)
        self.sim_added.merge(data.get("sim_added", {}))

    def quantile_ms(self, percentile: float) -> float | None:
        """Nearest-rank percentile of the judged latencies, to 0.1 ms (rounded up)."""
        if self.judged == 0:
            return None
        rank = max(math.ceil(Fraction(self.judged) * Fraction(str(percentile)) / 100), 1)
        seen = 0
        for step in sorted(int(k) for k in self.histogram):
            seen += self.histogram[str(step)]
            if seen >= rank:
                return step / HISTOGRAM_STEPS_PER_MS
        return self.max_ms


@dataclass(frozen=True)
class Thresholds:
    budget_ms: float
    tolerance_ms: float
    percentile: float
    max_error_ratio: float
    max_no_quote_ratio: float

    @property
    def threshold_ms(self) -> float:
        return self.budget_ms + self.tolerance_ms

    @classmethod
    def from_options(cls, options: Any) -> Thresholds:
        return cls(
            budget_ms=float(options.budget_ms),
            tolerance_ms=float(options.tolerance_ms),
            percentile=float(options.slo_percentile),
            max_error_ratio=float(options.max_error_ratio),
            max_no_quote_ratio=float(options.max_no_quote_ratio),
        )


@dataclass(frozen=True)
class SloCheck:
    name: str
    passed: bool
    observed: Any
    limit: Any
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "observed": self.observed,
            "limit": self.limit,
            "detail": self.detail,
        }


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def standard_checks(tally: Tally, limits: Thresholds, *, quotes_expected: bool) -> list[SloCheck]:
    """The latency, error and no_quote checks on merged counts."""
    checks: list[SloCheck] = []
    allowed = allowed_over(tally.judged, limits.percentile)
    p = f"p{limits.percentile:g}"
    checks.append(
        SloCheck(
            name="judged_responses",
            passed=tally.judged > 0,
            observed=tally.judged,
            limit="> 0",
            detail="responses to the requests the budget applies to",
        )
    )
    checks.append(
        SloCheck(
            name="latency",
            passed=tally.judged > 0 and tally.over_threshold <= allowed,
            observed=tally.over_threshold,
            limit=allowed,
            detail=(
                f"{p} <= {limits.threshold_ms:g} ms (budget {limits.budget_ms:g} + tolerance "
                f"{limits.tolerance_ms:g}): {tally.over_threshold} of {tally.judged} judged "
                f"responses took longer, at most {allowed} may ({p} "
                f"{tally.quantile_ms(limits.percentile)} ms, to 0.1 ms)"
            ),
        )
    )
    error_ratio = _ratio(tally.errors, tally.requests)
    checks.append(
        SloCheck(
            name="error_ratio",
            passed=error_ratio <= limits.max_error_ratio,
            observed=round(error_ratio, 6),
            limit=limits.max_error_ratio,
            detail=f"{tally.errors} of {tally.requests} requests failed",
        )
    )
    if quotes_expected:
        no_quote_ratio = _ratio(tally.no_quote, tally.answered)
        checks.append(
            SloCheck(
                name="no_quote_ratio",
                passed=tally.answered > 0 and no_quote_ratio <= limits.max_no_quote_ratio,
                observed=round(no_quote_ratio, 6),
                limit=limits.max_no_quote_ratio,
                detail=f"{tally.no_quote} of {tally.answered} answered quote requests were "
                "no_quote",
            )
        )
    return checks


def figures(tally: Tally, limits: Thresholds) -> dict[str, Any]:
    """The measured figures of the summary."""
    return {
        "requests": tally.requests,
        "errors": tally.errors,
        "error_ratio": round(_ratio(tally.errors, tally.requests), 6),
        "error_kinds": dict(tally.error_kinds.most_common()),
        "judged": {
            "count": tally.judged,
            "over_budget": tally.over_budget,
            "over_threshold": tally.over_threshold,
            "allowed_over_threshold": allowed_over(tally.judged, limits.percentile),
            "max_ms": round(tally.max_ms, 3),
            **{f"p{q:g}_ms": tally.quantile_ms(q) for q in QUANTILES},
        },
        "quotes": {
            "answered": tally.answered,
            "no_quote": tally.no_quote,
            "no_quote_ratio": round(_ratio(tally.no_quote, tally.answered), 6),
            "no_quote_reasons": dict(tally.no_quote_reasons.most_common()),
        },
        "by_name": {k: v.to_json() for k, v in sorted(tally.by_name.items())},
        "counters": dict(sorted(tally.counters.items())),
        "maxima": {k: round(v, 3) for k, v in sorted(tally.maxima.items())},
    }


def progress(tally: Tally, limits: Thresholds, judged: frozenset[str]) -> dict[str, Any]:
    """What the terminal's progress line shows while a run goes on (``progress.json``): the
    counts and the judged requests' percentiles, from the same exact tally as the summary's
    ``figures``, so the line's figures are the report's figures so far."""
    return {
        "requests": tally.requests,
        "errors": tally.errors,
        "judged_requests": sorted(judged),
        "judged": tally.judged,
        "percentile": limits.percentile,
        "p50_ms": tally.quantile_ms(50),
        "slo_percentile_ms": tally.quantile_ms(limits.percentile),
        "over_budget": tally.over_budget,
    }


def dumps(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=2, sort_keys=False) + "\n"
