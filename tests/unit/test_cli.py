"""The `rfqsim` command line as a new user meets it: `--version`, a help line on every flag,
commands that start without importing the simulator, and every command the README shows
parses exactly as written."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rfqsim.cli import COMMANDS, build_parser
from simulator import __version__

REPO = Path(__file__).resolve().parents[2]
RFQSIM = REPO / ".venv" / "bin" / "rfqsim"


def _sub_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _sub_parsers(sub)
    return found


def test_version_prints_the_package_version() -> None:
    result = subprocess.run(
        [str(RFQSIM), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == f"rfqsim {__version__}"


def test_every_flag_of_every_command_has_a_help_text() -> None:
    missing = [
        f"{parser.prog} {'/'.join(action.option_strings) or action.dest}"
        for parser in _sub_parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction)
        and not action.help
    ]
    assert missing == []


def test_the_overview_lists_every_command_with_its_help() -> None:
    text = build_parser(["--help"]).format_help()
    for name, command in COMMANDS.items():
        assert name in text
        assert command.help in text


@pytest.mark.parametrize(
    "argv", [["--help"], ["keys", "--help"], ["trigger", "--help"], ["webhooks", "--help"]]
)
def test_light_commands_do_not_import_the_simulator_app(argv: list[str]) -> None:
    # Import time was the 2.5 s every command paid: only the chosen command's module loads.
    probe = (
        "import sys\n"
        "from rfqsim.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('simulator.runtime.app', 'web3', 'pytest', 'conformance.harness.cli')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stderr


def _readme_commands() -> list[str]:
    """Every command line inside the README's shell code blocks (comments and continuation
    lines joined), as a person would copy it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands: list[str] = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def _recipes() -> set[str]:
    result = subprocess.run(
        ["just", "--summary"], capture_output=True, text=True, cwd=REPO, timeout=60, check=True
    )
    return set(result.stdout.split())


def _parses(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Parses, or asks for --help / --version (which exit 0)."""
    code: object = 0
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 0, argv


def test_every_readme_command_names_a_recipe_and_parses() -> None:
    commands = _readme_commands()
    assert any(c.startswith("just serve") for c in commands)
    recipes = _recipes()
    parser = build_parser()
    for command in commands:
        words = shlex.split(command)
        if words[0] == "just":
            assert words[1] in recipes, command
            if words[1] in ("serve", "rfqsim"):
                rest = words[2:]
                rest = rest[1:] if rest[:1] == ["--"] else rest
                _parses(parser, (["serve"] if words[1] == "serve" else []) + rest)
        elif words[0] in ("rfqsim", ".venv/bin/rfqsim"):
            _parses(parser, words[1:])
        elif words[0] not in ("curl", "export", "cd", "git", "pip", "python3"):
            pytest.fail(f"README command of an unknown kind: {command}")


def test_just_serve_takes_flags_with_or_without_a_double_dash() -> None:
    for argv in (["serve", "--", "--port", "0", "--help"], ["serve", "--port", "0", "--help"]):
        result = subprocess.run(
            ["just", *argv], capture_output=True, text=True, cwd=REPO, timeout=120
        )
        assert result.returncode == 0, result.stderr
        assert "--rpc-port" in result.stdout


def test_every_rfqsim_command_is_reachable_through_just() -> None:
    for name in COMMANDS:
        result = subprocess.run(
            ["just", "rfqsim", name, "--help"],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
        assert result.returncode == 0, (name, result.stderr)
        assert f"rfqsim {name}" in result.stdout
