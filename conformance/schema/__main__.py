"""``python -m conformance.schema``: the schemathesis run outside pytest.

Against a simulator (``GET /_sim/info`` says rfqsim) the caller is set up through ``/_sim``;
against any other deployment pass ``--api-key`` (or set ``RFQSIM_API_KEY``). Exit status 0 when
nothing but reviewed deviations failed, 1 otherwise, 2 when the run could not start.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from conformance.deployment.target import Target, TargetError, TargetManager, parse_rpc_urls
from conformance.schema import junit
from conformance.schema.auth import external_caller, simulator_caller
from conformance.schema.deviations import DEFAULT_PATH, DeviationFileError, load
from conformance.schema.results import RunError, RunResult
from conformance.schema.runner import run
from conformance.schema.settings import RunSettings

DEFAULT_JUNIT = Path("conformance-report") / "schemathesis-junit.xml"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.schema",
        description="schemathesis over GET /v2/openapi.json of an rfqsim simulator or a deployment",
    )
    parser.add_argument(
        "--base-url", required=True, help="service root, e.g. http://127.0.0.1:8080"
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("RFQSIM_API_KEY"),
        help="taker key for a non-simulator target (default: $RFQSIM_API_KEY)",
    )
    parser.add_argument(
        "--taker-key",
        default=os.environ.get("RFQSIM_TAKER_KEY"),
        help="private key of a funded taker wallet (default: $RFQSIM_TAKER_KEY, else a fresh one)",
    )
    parser.add_argument(
        "--rpc-url",
        action="append",
        default=[],
        metavar="CHAIN=URL",
        help="chains to steer requests to on a non-simulator target (repeatable)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="default: 42 or $RFQSIM_SCHEMATHESIS_SEED"
    )
    parser.add_argument("--max-examples", type=int, default=None, help="per operation and phase")
    parser.add_argument("--full", action="store_true", help="the long run (>= 1,000 requests)")
    parser.add_argument("--no-keyless", action="store_true", help="skip the keyless pass")
    parser.add_argument(
        "--default-limits",
        action="store_true",
        help="simulator: keep its rate limits and use a default-tier key (429s are judged too)",
    )
    parser.add_argument("--rate-limit", default=None, help='schemathesis rate limit, e.g. "5/s"')
    parser.add_argument("--deviations", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--junit", type=Path, default=DEFAULT_JUNIT, help="JUnit XML output path")
    return parser


def _run(target: Target, args: argparse.Namespace, settings: RunSettings) -> RunResult:
    deviations = load(settings.deviations_path)

    def write_junit(result: RunResult) -> None:
        junit.write(result, args.junit)

    if target.is_simulator:
        with simulator_caller(target, raise_limits=not settings.default_limits) as caller:
            return run(target.base_url, caller, settings, deviations, write_junit=write_junit)
    if not args.api_key:
        raise RunError(f"{target.base_url} is not a simulator: give --api-key or RFQSIM_API_KEY")
    caller = external_caller(target, api_key=args.api_key, taker_private_key=args.taker_key)
    return run(target.base_url, caller, settings, deviations, write_junit=write_junit)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    overrides: dict[str, object] = {
        "seed": args.seed,
        "max_examples": args.max_examples,
        "rate_limit": args.rate_limit,
        "deviations_path": args.deviations,
        "junit_path": args.junit,
    }
    if args.full:
        overrides["full"] = True
    if args.no_keyless:
        overrides["keyless"] = False
    if args.default_limits:
        overrides["default_limits"] = True
    environ = dict(os.environ)
    if args.full:
        environ["RFQSIM_SCHEMATHESIS_FULL"] = "1"  # full defaults for examples and steps
    try:
        settings = RunSettings.from_env(environ, **overrides)
        manager = TargetManager(
            base_url=args.base_url,
            rpc_urls=parse_rpc_urls(args.rpc_url),
            rfqsim_bin=None,
            rootdir=Path.cwd(),
        )
        result = _run(manager.get(), args, settings)
    except (RunError, TargetError, DeviationFileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.summary())
    failures, errors = result.failures(), result.errors()
    for failure in failures:
        print("\n" + failure.describe())
    for error in errors:
        print(f"\nengine error: {error}")
    print(f"\nJUnit: {args.junit}")
    return 1 if failures or errors else 0


if __name__ == "__main__":
    sys.exit(main())
