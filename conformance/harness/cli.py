"""`rfqsim conformance`: the conformance suite as a product for QA teams.

    rfqsim conformance [--config FILE] [--base-url URL] [--rpc-url CHAIN=URL ...]
                       [--api-key KEY[=SCOPES] ...] [--maker-key KEY ...] [--taker-key HEX ...]
                       [--webhook-public-url URL | --webhook-local [STATE_DIR]] [--only AREA ...]
                       [--list-uncovered [--run]] [--report DIR] [-- PYTEST ARGS]

Without --base-url the suite starts its own `rfqsim serve`. Against another deployment it first
checks every input of the flags and of --config, in one line each: the target answers, every RPC
URL is the chain it claims, every key authenticates with its scopes, every maker credential
authenticates as one, every taker wallet holds gas; a broken input stops the run (exit status
2) before any test. Then it runs the black-box tests (those needing the simulator's /_sim
control API are skipped with a reason and its kind) and writes the report directory:
matrix.html (one self-contained page), matrix.md (the headline over the selected rules, a
summary per area, the failures first, the skipped rules by kind, every rule with its full
statement), matrix.json and junit.xml (for CI systems).
--list-uncovered alone collects statically and lists the rules no test marks, without a target.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from conformance.deployment.preflight import (
    PreflightError,
    preflight,
)
from conformance.wire.areas import AREAS
from conformance.wire.inputs import (
    InputError,
    read_config,
)

__all__ = ["AREAS", "TESTS_DIR", "build_parser", "main", "preflight", "pytest_args", "run"]

TESTS_DIR = Path(__file__).resolve().parents[1] / "tests"
SCHEMATHESIS_MODULE = AREAS["schema"][0]  # the one module of the schemathesis area


# pytest options whose value is the next argument: that value never names tests.
_VALUE_OPTIONS = frozenset({"-k", "-m", "-p", "-n", "-o", "-c", "-W", "--deselect", "--ignore"})


def names_tests(extra: list[str]) -> bool:
    """Whether the pytest arguments after ``--`` select tests themselves (a test file, a directory
    or a node id ``file.py::test``); then the run is that selection, not the whole suite."""
    after_option = False
    for arg in extra:
        if after_option or arg.startswith("-"):
            after_option = arg in _VALUE_OPTIONS
            continue
        path = arg.split("::", 1)[0]
        if path.endswith(".py") or "::" in arg:
            return True
        try:
            if Path(path).is_dir():
                return True
        except OSError:  # not a path at all (too long a name)
            continue
    return False


def pytest_args(args: argparse.Namespace, extra: list[str]) -> list[str]:
    left_out = {SCHEMATHESIS_MODULE} if args.no_schemathesis else set()
    paths: list[str] = []
    for area in args.only or []:
        paths += [
            str(TESTS_DIR / name)
            for name in AREAS[area]
            if (TESTS_DIR / name).exists() and name not in left_out
        ]
    chosen = names_tests(extra)
    command = paths or ([] if chosen else [str(TESTS_DIR)])
    command += ["-p", "no:cacheprovider", "--conformance-report", args.report]
    command += [f"--ignore={TESTS_DIR / name}" for name in sorted(left_out)]
    if args.base_url:
        command += ["--base-url", args.base_url]
    if args.config:
        command += ["--conformance-config", args.config]
    for value in args.rpc_url:
        command += ["--rpc-url", value]
    for value in args.api_key:
        command += ["--api-key", value]
    for value in args.spendable_key:
        command += ["--spendable-key", value]
    for value in args.taker_key:
        command += ["--taker-key", value]
    for value in args.maker_key:
        command += ["--maker-key", value]
    if args.webhook_public_url:
        command += ["--webhook-public-url", args.webhook_public_url]
    if args.webhook_local is not None:
        command += [f"--webhook-local={args.webhook_local}"]
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
        "scopes, spendable and partner labels, maker_keys, taker_wallets, webhook_public_url; "
        "docs/conformance.md)",
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
        "--spendable-key",
        action="append",
        default=_env_list("RFQSIM_SPENDABLE_KEY"),
        metavar="KEY[=SCOPE,...]",
        help="a tx_test_ key whose rate-limit window the suite may run out (only the "
        "limiter's tests use it); repeatable",
    )
    parser.add_argument(
        "--taker-key",
        action="append",
        default=_env_list("RFQSIM_TAKER_KEY"),
        metavar="HEX",
        help="private key of a funded taker wallet; repeatable",
    )
    parser.add_argument(
        "--maker-key",
        action="append",
        default=_env_list("RFQSIM_MAKER_KEY"),
        metavar="KEY",
        help="a maker credential of the target's test environment (maker:* scopes only); "
        "repeatable",
    )
    parser.add_argument(
        "--webhook-public-url", help="https URL where this machine receives webhooks"
    )
    parser.add_argument(
        "--webhook-local",
        nargs="?",
        const="",
        metavar="STATE_DIR",
        help="the target is rfqsim serve on this machine: receive its webhooks on loopback, "
        "with a certificate from its local CA in STATE_DIR (default $RFQSIM_STATE_DIR, "
        "else .rfqsim)",
    )
    parser.add_argument(
        "--only", action="append", choices=sorted(AREAS), help="run one area (repeatable)"
    )
    parser.add_argument(
        "--no-schemathesis",
        action="store_true",
        help="leave out the schemathesis area (its rules read not_selected): a deployment "
        "whose limits cannot be raised paces it to more than 30 minutes",
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
        help="report directory: matrix.html, matrix.md, matrix.json, junit.xml "
        "(default conformance-report)",
    )
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: passed to pytest")


def _env_list(name: str) -> list[str]:
    return [v for v in os.environ.get(name, "").split() if v]


def _from_config(args: argparse.Namespace) -> None:
    """--base-url and the chains' RPC URLs of --config when no flag gives them (the plugin
    reads the file itself)."""
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
    if args.no_schemathesis and args.only and set(args.only) <= {"schema"}:
        message = "--no-schemathesis leaves nothing of --only schema"
        print(f"rfqsim conformance: {message}", file=sys.stderr)
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
