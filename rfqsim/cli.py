"""The `rfqsim` command line: `serve` (the simulator), `keys` (a running simulator's API keys),
`trigger` (run the flow that produces a webhook event), `conformance` (the black-box suite
against any base URL), `webhooks listen` (receive a running simulator's webhooks locally),
`makers run` (a simulated maker fleet as its own process) and `proxy` (check the traffic between
an app and any deployment against the spec).
This package sits above the others, so the simulator never imports the test harness.

Each command's module is imported only when that command runs (or its --help is asked for):
the simulator, web3 and pytest take seconds to import, and `rfqsim keys list` or
`rfqsim --version` should not pay for them."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rfqkit.redaction import install_redaction
from simulator import __version__


@dataclass(frozen=True)
class Command:
    module: str  # imported when the command is chosen
    help: str  # shown by `rfqsim --help` without importing the module


COMMANDS: dict[str, Command] = {
    "serve": Command("simulator.cli", "start chains, deploy the venue, serve the API"),
    "keys": Command("rfqsim.keys", "manage a running simulator's API keys"),
    "trigger": Command(
        "rfqsim.trigger", "run the real flow that sends a webhook event (rfq.filled, ...)"
    ),
    "webhooks": Command("rfqsim.webhooks_listen", "receive a running simulator's webhooks"),
    "conformance": Command(
        "rfqsim.conformance_command",
        "run the conformance suite against the simulator or a deployment",
    ),
    "makers": Command("rfqsim.makers_command", "run a simulated maker fleet"),
    "proxy": Command(
        "rfqsim.proxy_command",
        "check real traffic against the spec, in front of any deployment",
    ),
}


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named on the line: the first word that is not an option."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser when `argv` is None; else only the chosen command's sub-parser is built
    in full (the others are listed with their help line)."""
    parser = argparse.ArgumentParser(
        prog="rfqsim",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="`rfqsim COMMAND --help` for a command's flags. Exit codes: 0 ok, 1 a run "
        "failed, 2 bad arguments or settings, 3 a port is taken (serve).",
    )
    parser.add_argument("--version", action="version", version=f"rfqsim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = None if argv is None else _chosen(argv)
    for name, command in COMMANDS.items():
        if argv is None or name == chosen:
            module = importlib.import_module(command.module)
            module.add_parser(commands)
        else:
            commands.add_parser(name, help=command.help)
    return parser


def _runner(command: str) -> Callable[[argparse.Namespace], int]:
    module: Any = importlib.import_module(COMMANDS[command].module)
    return module.run  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    args = build_parser(words).parse_args(words)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    install_redaction()  # no key, claim token or signature in any log line
    return _runner(args.command)(args)


if __name__ == "__main__":
    sys.exit(main())
