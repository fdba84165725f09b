"""`rfqsim conformance`: the conformance suite as a product for QA teams.

    rfqsim conformance [--base-url URL] [--rpc-url CHAIN=URL ...] [--api-key KEY]
                       [--taker-key HEX] [--webhook-public-url URL] [--only AREA ...]
                       [--list-uncovered] [--report DIR] [-- PYTEST ARGS]

Without --base-url the suite starts its own `rfqsim serve`. Against another deployment it first
checks, in one line each, that the target answers, that every --rpc-url is the chain it claims,
that the --api-key authenticates and that the --taker-key wallet holds gas; then it runs the
black-box tests (those needing the simulator's /_sim control API are skipped with a reason) and
writes the rule-by-rule matrix to the report directory.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from eth_account import Account

TESTS_DIR = Path(__file__).resolve().parent / "tests"

# --only AREA: which test modules make up each area of the spec.
AREAS: dict[str, tuple[str, ...]] = {
    "conventions": (
        "test_conventions.py",
        "test_health.py",
        "test_openapi.py",
        "test_versioning.py",
    ),
    "auth": (
        "test_auth_proofs.py",
        "test_auth_keys.py",
        "test_claims.py",
        "test_auth_matrix.py",
    ),
    "limits": ("test_rate_limits.py", "test_rfq_concurrency.py", "test_rate_limits_instances.py"),
    "rfq": (
        "test_rfq_settlement.py",
        "test_rfq_paths.py",
        "test_rfq_steering.py",
        "test_rfq_lifecycle.py",
        "test_rfq_ladder_preview.py",
        "test_rfq_corrections.py",
        "test_rfq_soliciting.py",
        "test_maker_stream_protocol.py",
    ),
    "timing": ("test_timing_budgets.py",),
    "webhooks": ("test_webhooks_registry.py", "test_webhooks_delivery.py"),
    "ramp": (
        "test_ramp_catalog.py",
        "test_ramp_customers.py",
        "test_ramp_transfers.py",
        "test_ramp_transfers_lifecycle.py",
        "test_ramp_transfers_errors.py",
        "test_ramp_transfers_production.py",
        "test_ramp_policies.py",
    ),
    "v1": (
        "test_v1_limit_orders_place.py",
        "test_v1_limit_orders_quote.py",
        "test_v1_limit_orders_lifecycle.py",
        "test_v1_book_orderbook.py",
        "test_v1_book_access.py",
        "test_v1_swaps_create.py",
        "test_v1_swaps_lifecycle.py",
    ),
    "schema": ("test_schemathesis.py",),
    "sim": ("test_sim_clock.py", "test_sim_info.py"),
}


class PreflightError(RuntimeError):
    """One line that tells the QA engineer what to fix."""


def _get_json(url: str, headers: dict[str, str] | None = None, timeout: float = 10) -> Any:
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def _rpc(url: str, method: str, params: list[Any]) -> Any:
    payload = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, payload, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.loads(response.read())
    if "error" in answer:
        raise PreflightError(f"chain RPC {url} answered {method} with an error: {answer['error']}")
    return answer["result"]


def parse_rpc_urls(values: list[str]) -> dict[int, str]:
    urls: dict[int, str] = {}
    for value in values:
        chain, sep, url = value.partition("=")
        if not sep or not chain.isdigit() or not url:
            raise PreflightError(f"--rpc-url takes CHAIN=URL, got {value!r}")
        urls[int(chain)] = url
    return urls


def preflight(args: argparse.Namespace) -> None:
    """Fail fast, with one clear line, on the mistakes that would otherwise fail every test."""
    base = args.base_url.rstrip("/")
    try:
        health = _get_json(f"{base}/v2/health")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PreflightError(f"target {base} is unreachable ({reason}); check --base-url") from exc
    if not isinstance(health, dict) or "data" not in health:
        raise PreflightError(f"target {base}/v2/health did not answer with a data body")
    rpc_urls = parse_rpc_urls(args.rpc_url)
    for chain_id, url in rpc_urls.items():
        try:
            remote = int(_rpc(url, "eth_chainId", []), 16)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise PreflightError(f"--rpc-url {chain_id}={url} is unreachable ({exc})") from exc
        if remote != chain_id:
            raise PreflightError(f"--rpc-url {chain_id}={url} is chain {remote}, not {chain_id}")
    if args.api_key:
        probe = f"{base}/v2/rfq/rfq_conformance_preflight"
        try:
            _get_json(probe, {"Authorization": f"Bearer {args.api_key}"})
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                raise PreflightError(
                    "--api-key is refused (401): unknown, revoked or malformed"
                ) from exc
            if exc.code == 403:
                raise PreflightError(
                    "--api-key lacks trades:read (403); give it the taker scopes"
                ) from exc
            if exc.code != 404:
                raise PreflightError(f"--api-key probe answered {exc.code}") from exc
    if args.taker_key:
        try:
            address = Account.from_key(args.taker_key).address
        except ValueError as exc:
            raise PreflightError("--taker-key is not a private key (32 bytes hex)") from exc
        for chain_id, url in rpc_urls.items():
            if int(_rpc(url, "eth_getBalance", [address, "latest"]), 16) == 0:
                raise PreflightError(
                    f"--taker-key wallet {address} has no gas on chain {chain_id}; fund it first"
                )


def pytest_args(args: argparse.Namespace, extra: list[str]) -> list[str]:
    paths: list[str] = []
    for area in args.only or []:
        paths += [str(TESTS_DIR / name) for name in AREAS[area] if (TESTS_DIR / name).exists()]
    command = paths or [str(TESTS_DIR)]
    command += ["-p", "no:cacheprovider", "--conformance-report", args.report]
    if args.base_url:
        command += ["--base-url", args.base_url]
    for value in args.rpc_url:
        command += ["--rpc-url", value]
    if args.list_uncovered:
        command.append("--list-uncovered")
    return command + extra


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rfqsim conformance", description=__doc__.split("\n\n")[0]
    )
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", help="service root to test (default: start rfqsim serve)")
    parser.add_argument("--rpc-url", action="append", default=[], metavar="CHAIN=URL")
    parser.add_argument("--api-key", default=os.environ.get("RFQSIM_API_KEY"), help="taker key")
    parser.add_argument(
        "--taker-key", default=os.environ.get("RFQSIM_TAKER_KEY"), help="taker wallet key"
    )
    parser.add_argument(
        "--webhook-public-url", help="https URL where this machine receives webhooks"
    )
    parser.add_argument(
        "--only", action="append", choices=sorted(AREAS), help="run one area (repeatable)"
    )
    parser.add_argument("--list-uncovered", action="store_true", help="print rules no test covered")
    parser.add_argument("--report", default="conformance-report", help="matrix output directory")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: passed to pytest")


def run(args: argparse.Namespace) -> int:
    extra = [a for a in args.pytest_args if a != "--"]
    if args.base_url:
        try:
            preflight(args)
        except PreflightError as exc:
            print(f"rfqsim conformance: {exc}", file=sys.stderr)
            return 2
    # The options reach black-box tests through the environment (a QA run may also call pytest
    # directly with the same variables).
    for name, value in (
        ("RFQSIM_API_KEY", args.api_key),
        ("RFQSIM_TAKER_KEY", args.taker_key),
        ("RFQSIM_WEBHOOK_PUBLIC_URL", args.webhook_public_url),
    ):
        if value:
            os.environ[name] = value
    import pytest  # imported late: `rfqsim --help` should not pay for pytest's start-up

    return int(pytest.main(pytest_args(args, extra)))


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
