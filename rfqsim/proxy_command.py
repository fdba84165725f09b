"""`rfqsim proxy`: put the spec's checks between an app and any deployment.

    rfqsim proxy --upstream URL [--listen HOST:PORT] [--report DIR]
                 [--fail-on-violation] [--no-header] [--redact-header NAME ...]
                 [--upstream-timeout SECONDS]

A reverse proxy for /v2, /v1, the rates feed and the maker stream that forwards every exchange
unchanged and checks it with the conformance suite's own assertions: the service's answers and
the client's requests, one exchange at a time and across them (RFQ and ramp statuses, claim
tokens, idempotency replays, the limiter). One line per violation as it happens; on SIGINT or
SIGTERM the report (violations.json, violations.md, junit.xml). Nothing it writes carries a
secret: credentials are redacted by header and field name as well as by shape.
docs/proxy.md has the details.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rfqsim.proxy.forward import DEFAULT_READ_TIMEOUT_S
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
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this Host name (repeatable); loopback names and IP "
        "addresses always, any other name is refused 403 (docs/security.md)",
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
    proxy.add_argument(
        "--redact-header",
        action="append",
        default=[],
        metavar="NAME",
        help="a header whose value is a secret, never written (repeatable; Authorization, "
        "X-API-Key, X-Rfq-Claim and the spec's other credentials always are)",
    )
    proxy.add_argument(
        "--upstream-timeout",
        type=float,
        default=DEFAULT_READ_TIMEOUT_S,
        metavar="SECONDS",
        help="an upstream that sends nothing for this long is answered 502 upstream_error "
        f"(default {DEFAULT_READ_TIMEOUT_S:g})",
    )


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--listen takes HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


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
    timeout = float(args.upstream_timeout)
    if not timeout > 0:
        print(f"rfqsim proxy: --upstream-timeout must be > 0, got {timeout:g}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    if not is_loopback(host):
        print(
            f"rfqsim proxy: warning: listening on {host or 'every interface'}, not loopback: "
            "anyone on the network reaches the upstream through the proxy, including what the "
            "upstream serves to loopback callers only (a local simulator's /_sim controls)",
            file=sys.stderr,
            flush=True,
        )
    options = Options(
        upstream=upstream,
        host=host,
        port=port,
        report_dir=Path(args.report),
        fail_on_violation=bool(args.fail_on_violation),
        header=not args.no_header,
        redact_headers=tuple(args.redact_header),
        upstream_timeout_s=timeout,
        allowed_hosts=tuple(args.allowed_host),
    )
    try:
        return asyncio.run(run_proxy(options, sys.stdout))
    except ListenError as exc:
        print(f"rfqsim proxy: {exc}", file=sys.stderr)
        return EXIT_PORT_TAKEN
