"""The JSON summary the master writes next to locust's reports (``slo.json``)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loadtests.common import REPORTS_DIR
from loadtests.slo import SloCheck, Tally, Thresholds, figures
from rfqkit.timestamps import isoformat_unix


def summary_path(options: Any, profile: str) -> Path:
    """``--slo-summary``, else next to ``--csv``, else a fresh report directory."""
    if options.slo_summary:
        return Path(options.slo_summary)
    if options.csv_prefix:
        return Path(options.csv_prefix).parent / "slo.json"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return REPORTS_DIR / f"{profile}-{stamp}" / "slo.json"


def locust_percentiles(
    environment: Any, judged: Iterable[str], percentile: float
) -> dict[str, Any]:
    """Locust's own (bucketed) percentile per judged request name, for comparison."""
    names = set(judged)
    rows: dict[str, Any] = {}
    for (name, _method), entry in environment.stats.entries.items():
        if name in names and entry.num_requests:
            rows[name] = {
                "num_requests": entry.num_requests,
                f"p{percentile:g}_ms": entry.get_response_time_percentile(percentile / 100),
                "max_ms": entry.max_response_time,
            }
    return rows


def build_summary(
    *,
    profile: str,
    environment: Any,
    mode: str,
    limits: Thresholds,
    judged: Iterable[str],
    quotes_expected: bool,
    checks: list[SloCheck],
    code: int,
    tally: Tally,
    times: tuple[float | None, float | None],
    workers: int,
    profile_figures: dict[str, Any],
    setup_facts: dict[str, Any],
    cleanup: list[str],
) -> dict[str, Any]:
    options = environment.parsed_options
    started, stopped = times
    return {
        "profile": profile,
        "passed": all(c.passed for c in checks),
        "exit_code": code,
        "host": environment.host,
        "mode": mode,
        "workers": workers,
        "started_at": isoformat_unix(started),
        "stopped_at": isoformat_unix(stopped),
        "duration_s": round((stopped or time.time()) - started, 3) if started else None,
        "users": options.num_users,
        "spawn_rate": options.spawn_rate,
        "run_time_s": options.run_time,
        "shape": options.shape,
        "slo": {
            "judged_requests": sorted(judged),
            "budget_ms": limits.budget_ms,
            "tolerance_ms": limits.tolerance_ms,
            "threshold_ms": limits.threshold_ms,
            "percentile": limits.percentile,
            "max_error_ratio": limits.max_error_ratio,
            "max_no_quote_ratio": limits.max_no_quote_ratio if quotes_expected else None,
        },
        "checks": [c.to_json() for c in checks],
        "figures": figures(tally, limits),
        "locust_bucketed_percentiles": locust_percentiles(environment, judged, limits.percentile),
        "profile_figures": profile_figures,
        "setup": setup_facts,
        "cleanup": cleanup,
    }
