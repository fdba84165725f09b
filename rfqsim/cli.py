"""The `rfqsim` command line: `serve` (the simulator), `keys` (a running simulator's API keys),
`conformance` (the black-box suite against any base URL), `webhooks listen` (receive a running
simulator's webhooks locally) and `makers run` (a simulated maker fleet as its own process).
This package sits above the others, so the simulator never imports the test harness."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from conformance.cli import add_arguments as add_conformance_arguments
from conformance.cli import run as run_conformance
from makers.cli import add_fleet_arguments, run_fleet
from rfqkit.redaction import install_redaction
from rfqsim import keys, webhooks_listen
from simulator import cli as serve


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rfqsim", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve.add_parser(commands)
    keys.add_parser(commands)
    conformance_cmd = commands.add_parser(
        "conformance", help="run the conformance suite against the simulator or a deployment"
    )
    add_conformance_arguments(conformance_cmd)
    webhooks_listen.add_parser(commands)
    makers_cmd = commands.add_parser("makers", help="run a simulated maker fleet")
    makers_actions = makers_cmd.add_subparsers(dest="action", required=True)
    add_fleet_arguments(
        makers_actions.add_parser("run", help="run a fleet against a simulator URL")
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    install_redaction()  # no key, claim token or signature in any log line
    if args.command == "serve":
        return serve.run(args)
    if args.command == "keys":
        return keys.run(args)
    if args.command == "conformance":
        return run_conformance(args)
    if args.command == "webhooks":
        return webhooks_listen.run(args)
    if args.command == "makers":
        return asyncio.run(run_fleet(args))
    return 2


if __name__ == "__main__":
    sys.exit(main())
