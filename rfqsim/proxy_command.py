"""`rfqsim proxy`: put the spec's checks between an app and any deployment.

    rfqsim proxy --upstream URL [--listen HOST:PORT] [--report DIR]
                 [--fail-on-violation] [--no-header]

A reverse proxy for /v2, /v1, the rates feed and the maker stream that forwards every exchange
unchanged and checks it with the conformance suite's own assertions: the service's answers and
the client's requests, one exchange at a time and across them (RFQ and ramp statuses, claim
tokens, idempotency replays, the limiter). One line per violation as it happens; on SIGINT or
SIGTERM the report (violations.json, violations.md, junit.xml). docs/proxy.md has the details.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rfqsim.proxy.running import ListenError, Options
from rfqsim.proxy.running import run as run_proxy

DEFAULT_LISTEN = "127.0.0.1:8081"
DEFAULT_REPORT = "proxy-report"
EXIT_BAD_ARGUMENTS = 2
EXIT_PORT_TAKEN = 3


def add_parser(commands: Any) -> None:
    proxy = commands.add_parser(
        "proxy",
        help="check real traffic against the spec, in front of any deployment",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    proxy.add_argument(
        "--upstream", required=True, help="the service root, e.g. https://staging.example"
    )
    proxy.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help=f"where the proxy listens (default {DEFAULT_LISTEN}; port 0: a free one)",
    )
    proxy.add_argument(
        "--report",
        default=DEFAULT_REPORT,
        metavar="DIR",
        help=f"where the report goes on stop (default {DEFAULT_REPORT})",
    )
    proxy.add_argument(
        "--fail-on-violation",
        action="store_true",
        help="exit 1 when any violation was found (for CI jobs)",
    )
    proxy.add_argument(
        "--no-header",
        action="store_true",
        help="never add X-Rfqsim-Violations; answers stream through and are checked after",
    )


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--listen takes HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def run(args: argparse.Namespace) -> int:
    if not __debug__:
        print("rfqsim proxy: the checks are assertions; run Python without -O", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    upstream = str(args.upstream).rstrip("/")
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        print(f"rfqsim proxy: --upstream must be an http(s) URL, got {upstream!r}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    try:
        host, port = _listen(str(args.listen))
    except ValueError as exc:
        print(f"rfqsim proxy: {exc}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    options = Options(
        upstream=upstream,
        host=host,
        port=port,
        report_dir=Path(args.report),
        fail_on_violation=bool(args.fail_on_violation),
        header=not args.no_header,
    )
    try:
        return asyncio.run(run_proxy(options, sys.stdout))
    except ListenError as exc:
        print(f"rfqsim proxy: {exc}", file=sys.stderr)
        return EXIT_PORT_TAKEN
