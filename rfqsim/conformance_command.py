"""`rfqsim conformance`: the conformance suite (conformance/harness/cli.py) as an rfqsim command."""

from __future__ import annotations

import argparse
from typing import Any

from conformance.harness.cli import add_arguments
from conformance.harness.cli import run as run_conformance


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "conformance", help="run the conformance suite against the simulator or a deployment"
    )
    add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return run_conformance(args)
