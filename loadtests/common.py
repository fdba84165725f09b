"""What every profile shares: the loopback-only rule, the caps on users and time, and the
command-line options of the SLO and the profiles (registered with locust, so they work the same
through ``python -m loadtests.run`` and a bare ``locust -f loadtests/profiles/X.py``)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
REPORTS_DIR = Path(__file__).resolve().parent / "reports"
PROGRESS_FILE = "progress.json"  # next to slo.json: the master's figures so far

# Load runs are bounded: a mistyped `-u 5000` or `-t 10h` is refused, not run.
DEFAULT_USERS = 20
MAX_USERS = 200
DEFAULT_RUN_TIME_S = 60
MAX_RUN_TIME_S = 30 * 60
MAX_SPAWN_RATE = 50.0
MAX_TAKERS = 256

# The spec's timing defaults (docs/spec/1-rfq-v2.md "Timing defaults" and "Limits").
REPLY_BUDGET_MS = 750.0
DEFAULT_TOLERANCE_MS = 30.0
LADDER_CACHE_MS = 2000.0
CLIENT_TIMEOUT_S = 75.0  # "clients should use a 75 s timeout" on POST /v2/rfq/request

SHAPES = ("steady", "ramp", "spike")
LOOPBACK_NAMES = ("localhost",)


class NotLoopback(ValueError):
    pass


def ensure_loopback(url: str | None) -> str:
    """``url`` itself when its host is loopback (127.0.0.0/8, ::1, localhost); else NotLoopback.

    Load runs only ever target a simulator on this machine (or one reached through a local port
    forward): a load profile pointed at a shared or real deployment by mistake would be an attack.
    """
    if not url:
        raise NotLoopback("no target: pass --host http://127.0.0.1:PORT (loopback only)")
    parts = urlsplit(url)
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host:
        raise NotLoopback(f"target {url!r} is not an http(s) URL with a host")
    if host.lower() in LOOPBACK_NAMES:
        return url
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise NotLoopback(
            f"refusing to load {url}: load runs target loopback only "
            "(127.0.0.0/8, ::1, localhost); forward a port over SSH to reach another machine"
        )
    return url


_DURATION = re.compile(r"^\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s?)?\s*$")


def parse_duration_s(text: str) -> int:
    """Seconds of a locust-style duration: ``90``, ``60s``, ``2m``, ``1h30m``."""
    match = _DURATION.match(text)
    if not match or not any(match.groups()):
        raise ValueError(f"not a duration: {text!r} (use e.g. 60s, 5m, 1h30m)")
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def check_bounds(
    users: int | None, spawn_rate: float | None, run_time_s: int | None, takers: int = 1
) -> None:
    """Refuse a run beyond the hard caps (ValueError with the reason)."""
    if not 1 <= takers <= MAX_TAKERS:
        raise ValueError(f"--takers must be between 1 and {MAX_TAKERS}, got {takers}")
    if users is not None and not 1 <= users <= MAX_USERS:
        raise ValueError(f"--users must be between 1 and {MAX_USERS}, got {users}")
    if spawn_rate is not None and not 0 < spawn_rate <= MAX_SPAWN_RATE:
        raise ValueError(f"--spawn-rate must be > 0 and <= {MAX_SPAWN_RATE:g}, got {spawn_rate:g}")
    if run_time_s is not None and not 1 <= run_time_s <= MAX_RUN_TIME_S:
        raise ValueError(f"--run-time must be between 1 s and {MAX_RUN_TIME_S} s, got {run_time_s}")


def add_options(parser: Any) -> None:
    """Register the SLO and profile options on locust's (configargparse) parser."""
    group = parser.add_argument_group("rfqsim load profiles (loadtests/)")
    group.add_argument(
        "--budget-ms",
        type=float,
        default=REPLY_BUDGET_MS,
        help="Reply budget the judged requests are held to (default 750 ms)",
    )
    group.add_argument(
        "--tolerance-ms",
        type=float,
        default=DEFAULT_TOLERANCE_MS,
        help="Allowance over the budget (network, client); may be negative (default 30 ms)",
    )
    group.add_argument(
        "--slo-percentile",
        type=float,
        default=99.0,
        help="The percentile that must sit within budget + tolerance (default 99)",
    )
    group.add_argument(
        "--max-error-ratio",
        type=float,
        default=0.01,
        help="Highest share of failed requests (default 0.01)",
    )
    group.add_argument(
        "--max-no-quote-ratio",
        type=float,
        default=0.05,
        help="Highest share of no_quote answers among answered quote requests (default 0.05)",
    )
    group.add_argument(
        "--sim-added-warn-ms",
        type=float,
        default=10.0,
        help="Warn when the simulator itself (Server-Timing sim - makers) added more than this "
        "at p99 (default 10 ms)",
    )
    group.add_argument(
        "--shape",
        choices=SHAPES,
        default="steady",
        help="Load shape over --run-time: steady, ramp (four steps) or spike (default steady)",
    )
    group.add_argument(
        "--slo-summary",
        default="",
        help="Where the master writes the SLO summary JSON (default: next to --csv, "
        "else loadtests/reports/<profile>-<time>/slo.json)",
    )
    group.add_argument(
        "--takers",
        type=int,
        default=32,
        help="Fresh taker wallets funded on the test chain for the run (default 32)",
    )
    group.add_argument(
        "--keyless-share",
        type=float,
        default=0.2,
        help="rfq_storm: share of users without a key (proof once, then the grant; default 0.2)",
    )
    group.add_argument(
        "--cancel-share",
        type=float,
        default=0.7,
        help="rfq_storm: share of firm quotes the taker cancels instead of letting lapse "
        "(default 0.7)",
    )
    group.add_argument(
        "--chain-id",
        type=int,
        default=97,
        help="Chain the profiles trade on (default 97, the test chain)",
    )
    group.add_argument(
        "--quote-ttl-ms",
        type=int,
        default=6000,
        help="webhook_sink: makers' quote lifetime during the run, so rfq.expired flows "
        "(default 6000; the venue needs at least 5 s after replyBy)",
    )
