"""`rfqsim makers run`: a simulated maker fleet as its own process (makers/cli.py)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from makers.cli import add_fleet_arguments, run_fleet


def add_parser(commands: Any) -> None:
    makers = commands.add_parser("makers", help="run a simulated maker fleet")
    actions = makers.add_subparsers(dest="action", required=True)
    add_fleet_arguments(actions.add_parser("run", help="run a fleet against a simulator URL"))


def run(args: argparse.Namespace) -> int:
    return asyncio.run(run_fleet(args))
