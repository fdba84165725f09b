"""Tolerances of the timing-budget checks (docs/conformance.md "Timing budgets").

The spec's timings are exact numbers (750 ms reply budget, 250 ms preferred head start, a 2 s
ladder cache, a 60 s quote TTL, a 60 s proof clock window, a 12 h grant); a black-box client
measures them with its own clock, through a network and a busy machine. Each check therefore
allows a tolerance, and each tolerance is a pytest option of the conformance plugin, so a QA run
against a remote deployment can widen them without editing a test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class TimingTolerances:
    budget_ms: float  # an answer may arrive this long after the reply budget
    head_start_ms: float  # the rest may be asked this much before the preferred wait ends
    ladder_ms: float  # the ladder may be this much older than its 2 s cache
    ttl_ms: float  # a quote's expiresAt may exceed createdAt + TTL by this much
    clock_window_ms: float  # proofs are judged at 60 s +- this (stale beyond, fresh within)
    grant_s: float  # a grant is checked live at 12 h - this and lapsed at 12 h + this
    # Not a tolerance: the test corridor's reply budget, a per-corridor setting whose default
    # the spec gives (750 ms); a deployment that sets it otherwise is told so here.
    reply_budget_ms: float


# option name -> (field, default, help)
OPTIONS: dict[str, tuple[str, float, str]] = {
    "--budget-tolerance-ms": (
        "budget_ms",
        30.0,
        "how far past the reply budget a firm answer may arrive, measured by the client",
    ),
    "--head-start-tolerance-ms": (
        "head_start_ms",
        20.0,
        "how much less than the preferred wait may separate preferred and other makers' asks",
    ),
    "--ladder-tolerance-ms": (
        "ladder_ms",
        250.0,
        "how much older than its 2 s cache a served price ladder may be",
    ),
    "--ttl-tolerance-ms": (
        "ttl_ms",
        1.0,
        "slack on the 60 s quote TTL cap (timestamps have millisecond precision)",
    ),
    "--clock-window-tolerance-ms": (
        "clock_window_ms",
        1000.0,
        "margin around the 60 s proof clock window: proofs this far outside are stale, "
        "this far inside fresh",
    ),
    "--reply-budget-ms": (
        "reply_budget_ms",
        750.0,
        "the test corridor's reply budget (a per-corridor setting; the spec's default 750 ms)",
    ),
    "--grant-tolerance-s": (
        "grant_s",
        600.0,
        "margin around the 12 h grant: live this long before it, lapsed this long after",
    ),
}


def add_options(group: Any) -> None:
    for option, (_, default, help_text) in OPTIONS.items():
        group.addoption(
            option,
            type=float,
            default=default,
            metavar="N",
            help=f"{help_text} (default: {default:g})",
        )


def from_config(config: pytest.Config) -> TimingTolerances:
    values: dict[str, float] = {}
    for option, (name, _, _) in OPTIONS.items():
        value = float(config.getoption(option))
        if value < 0:
            raise pytest.UsageError(f"{option} must not be negative, got {value:g}")
        values[name] = value
    return TimingTolerances(**values)
