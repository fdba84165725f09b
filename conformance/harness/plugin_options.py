"""The conformance harness's command-line options (pytest's `conformance` group): the
target, the QA team's inputs, the report, the foreign mode and the timing tolerances.
docs/conformance.md lists them."""

from __future__ import annotations

import pytest

from conformance.wire.server import DEFAULT_START_TIMEOUT
from conformance.wire.timing import add_options as add_timing_options


def add_options(parser: pytest.Parser) -> None:
    """Every option of the conformance harness, in pytest's `conformance` group."""
    group = parser.getgroup("conformance", "rfqsim conformance harness")
    group.addoption(
        "--base-url",
        default=None,
        metavar="URL",
        help="service root to test (default: start `rfqsim serve --port 0` for the session)",
    )
    group.addoption(
        "--rpc-url",
        action="append",
        default=[],
        metavar="CHAIN=URL",
        help="JSON-RPC URL of a chain (repeatable); default: the simulator's own chains",
    )
    group.addoption(
        "--conformance-report",
        default="conformance-report",
        metavar="DIR",
        help="directory for matrix.html, matrix.md, matrix.json and junit.xml "
        "(default: conformance-report)",
    )
    group.addoption(
        "--rfqsim-bin",
        default=None,
        metavar="PATH",
        help="rfqsim executable to start (default: .venv/bin/rfqsim, else rfqsim on PATH)",
    )
    group.addoption(
        "--rfqsim-start-timeout",
        type=float,
        default=DEFAULT_START_TIMEOUT,
        metavar="SECONDS",
        help="how long to wait for rfqsim's ready file (default: 60)",
    )
    group.addoption(
        "--min-control-free",
        type=float,
        default=None,
        metavar="PERCENT",
        help="fail the run when fewer than PERCENT %% of the rules that do not inherently need "
        "the control API passed (the report's control-free share)",
    )
    group.addoption(
        "--list-uncovered",
        action="store_true",
        default=False,
        help="print the spec rule ids no test covered at the end of the run",
    )
    group.addoption(
        "--conformance-config",
        default=None,
        metavar="FILE",
        help="YAML or JSON file with the inputs a QA team is given: chains (chain_id, "
        "rpc_url, environment), api_keys (key, scopes, partner, spendable), maker_keys, "
        "taker_wallets, "
        "webhook_public_url, webhook_listen, webhook_tls_cert, webhook_tls_key",
    )
    group.addoption(
        "--api-key",
        action="append",
        default=[],
        metavar="KEY[=SCOPE,...]",
        help="an API key of the target (repeatable; scopes probed when not given; "
        "default $RFQSIM_API_KEY)",
    )
    group.addoption(
        "--spendable-key",
        action="append",
        default=[],
        metavar="KEY[=SCOPE,...]",
        help="a tx_test_ key whose rate-limit window the suite may run out (the limiter's "
        "tests use it alone; default $RFQSIM_SPENDABLE_KEY)",
    )
    group.addoption(
        "--taker-key",
        action="append",
        default=[],
        metavar="HEX",
        help="private key of a funded taker wallet (repeatable; default $RFQSIM_TAKER_KEY)",
    )
    group.addoption(
        "--maker-key",
        action="append",
        default=[],
        metavar="KEY",
        help="a maker credential of the target's test environment (maker:* scopes only; "
        "repeatable; default $RFQSIM_MAKER_KEY)",
    )
    group.addoption(
        "--webhook-public-url",
        default=None,
        metavar="URL",
        help="public https URL that reaches the suite's webhook receiver "
        "(default $RFQSIM_WEBHOOK_PUBLIC_URL)",
    )
    group.addoption(
        "--webhook-listen",
        default=None,
        metavar="HOST:PORT",
        help="where the suite's webhook receiver listens; the public URL must be forwarded "
        "here, path unchanged (default 127.0.0.1:8765)",
    )
    group.addoption(
        "--webhook-tls-cert",
        default=None,
        metavar="FILE",
        help="PEM certificate chain the receiver serves (a tunnel passing TLS through); "
        "without it the receiver speaks plain http behind a TLS-terminating tunnel",
    )
    group.addoption(
        "--webhook-tls-key", default=None, metavar="FILE", help="PEM key for --webhook-tls-cert"
    )
    group.addoption(
        "--webhook-local",
        nargs="?",
        const="",
        default=None,
        metavar="STATE_DIR",
        help="the target is `rfqsim serve` on this machine (a loopback --base-url): receive its "
        "webhooks on a free loopback port, with a certificate from its local webhook CA in "
        "STATE_DIR (default $RFQSIM_STATE_DIR, else .rfqsim where it was started)",
    )
    group.addoption(
        "--no-control",
        action="store_true",
        default=False,
        help="start `rfqsim serve --no-control-api` and test it as a foreign deployment",
    )
    group.addoption(
        "--through-proxy",
        default=None,
        metavar="DIR",
        help="with --no-control: put `rfqsim proxy` in front of the simulator it starts, its "
        "reports in DIR; the run fails when the proxy finds a fault of the service or a broken "
        "request the service accepted",
    )
    group.addoption(
        "--max-wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help="skip tests that wait longer than this in real time (marker needs('time<=Ns'))",
    )
    add_timing_options(group)
