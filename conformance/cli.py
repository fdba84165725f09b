"""`rfqsim conformance`: the conformance suite as a product for QA teams.

    rfqsim conformance [--config FILE] [--base-url URL] [--rpc-url CHAIN=URL ...]
                       [--api-key KEY[=SCOPES] ...] [--taker-key HEX ...]
                       [--webhook-public-url URL] [--only AREA ...]
                       [--list-uncovered [--run]] [--report DIR] [-- PYTEST ARGS]

Without --base-url the suite starts its own `rfqsim serve`. Against another deployment it first
checks, in one line each, that the target answers, that every --rpc-url is the chain it claims,
that the --api-key authenticates and that the --taker-key wallet holds gas; then it runs the
black-box tests (those needing the simulator's /_sim control API are skipped with a reason) and
writes the report directory: matrix.md (a summary per area, the failures first, every rule
with its full statement), matrix.json and junit.xml (for CI systems). --list-uncovered alone
collects statically and lists the rules no test marks, without a target.
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

from conformance.areas import AREAS
from conformance.inputs import InputError, read_config

__all__ = ["AREAS", "TESTS_DIR", "build_parser", "main", "preflight", "pytest_args", "run"]

TESTS_DIR = Path(__file__).resolve().parent / "tests"


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
    for given in args.api_key:
        key = given.partition("=")[0]
        probe = f"{base}/v2/rfq/rfq_conformance_preflight"
        try:
            _get_json(probe, {"Authorization": f"Bearer {key}"})
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                raise PreflightError(
                    f"--api-key {key.split('.')[0]}... is refused (401): unknown, revoked "
                    "or malformed"
                ) from exc
            if exc.code != 404 and exc.code != 403:  # 403: a key without trades:read
                raise PreflightError(f"--api-key probe answered {exc.code}") from exc
    for taker_key in args.taker_key:
        try:
            address = Account.from_key(taker_key).address
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
    if args.config:
        command += ["--conformance-config", args.config]
    for value in args.rpc_url:
        command += ["--rpc-url", value]
    for value in args.api_key:
        command += ["--api-key", value]
    for value in args.taker_key:
        command += ["--taker-key", value]
    if args.webhook_public_url:
        command += ["--webhook-public-url", args.webhook_public_url]
    if args.list_uncovered:
        command.append("--list-uncovered")
        if not args.run:
            # Static: the rules no collected test marks, in seconds and without a target. With
            # --run the suite runs and the list is what this run left uncovered.
            command += ["--collect-only", "-q"]
    return command + extra


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rfqsim conformance", description=__doc__.split("\n\n")[0]
    )
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        help="YAML file with the inputs a QA team is given (base_url, chains, api_keys with "
        "scopes, taker_wallets, webhook_public_url; docs/conformance.md)",
    )
    parser.add_argument("--base-url", help="service root to test (default: start rfqsim serve)")
    parser.add_argument(
        "--rpc-url",
        action="append",
        default=[],
        metavar="CHAIN=URL",
        help="JSON-RPC URL of the target's chain CHAIN (repeatable); needed with --base-url "
        "for tests that settle on chain; default: the simulator's own chains",
    )
    parser.add_argument(
        "--api-key",
        action="append",
        default=_env_list("RFQSIM_API_KEY"),
        metavar="KEY[=SCOPE,...]",
        help="an API key of the target, with its scopes (probed when left out); repeatable",
    )
    parser.add_argument(
        "--taker-key",
        action="append",
        default=_env_list("RFQSIM_TAKER_KEY"),
        metavar="HEX",
        help="private key of a funded taker wallet; repeatable",
    )
    parser.add_argument(
        "--webhook-public-url", help="https URL where this machine receives webhooks"
    )
    parser.add_argument(
        "--only", action="append", choices=sorted(AREAS), help="run one area (repeatable)"
    )
    parser.add_argument(
        "--list-uncovered",
        action="store_true",
        help="list the spec rules no test covers, from a static collection (seconds, no target)",
    )
    parser.add_argument(
        "--run",
        action="store_true",
        help="with --list-uncovered: run the suite and list the rules this run left uncovered",
    )
    parser.add_argument(
        "--report",
        default="conformance-report",
        help="report directory: matrix.md, matrix.json, junit.xml (default conformance-report)",
    )
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: passed to pytest")


def _env_list(name: str) -> list[str]:
    return [v for v in os.environ.get(name, "").split() if v]


def _from_config(args: argparse.Namespace) -> None:
    """--base-url, the chains' RPC URLs and the taker keys of --config when no flag gives them
    (preflight checks them like flags)."""
    if not args.config:
        return
    inputs = read_config(args.config)
    if not args.base_url and inputs.base_url:
        args.base_url = inputs.base_url
    given = {value.partition("=")[0] for value in args.rpc_url}
    for chain_id, chain in inputs.chains.items():
        if chain.rpc_url and str(chain_id) not in given:
            args.rpc_url.append(f"{chain_id}={chain.rpc_url}")


def run(args: argparse.Namespace) -> int:
    extra = [a for a in args.pytest_args if a != "--"]
    try:
        _from_config(args)
    except InputError as exc:
        print(f"rfqsim conformance: {exc}", file=sys.stderr)
        return 2
    if args.base_url and (args.run or not args.list_uncovered):
        try:
            preflight(args)
        except PreflightError as exc:
            print(f"rfqsim conformance: {exc}", file=sys.stderr)
            return 2
    # Keys also reach the schemathesis area (its own runner) through the environment.
    if args.api_key:
        os.environ["RFQSIM_API_KEY"] = args.api_key[0].partition("=")[0]
    import pytest  # imported late: `rfqsim --help` should not pay for pytest's start-up

    return int(pytest.main(pytest_args(args, extra)))


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
