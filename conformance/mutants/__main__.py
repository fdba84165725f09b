"""`python -m conformance.mutants` (`just mutants`): the mutation score of the conformance suite.

For each mode (``control``: an ``rfqsim serve`` with its /_sim control API; ``no-control``: the
same started with ``--no-control-api``, given to the suite only through the inputs an operator
hands a QA team) it starts one simulator, then:

1. runs the selected test modules through the proxy with no mutation (the identity run); tests
   that do not pass there are left out of the mutant runs, so a mutant is never "caught" by a
   test that fails anyway;
2. for each mutation, starts the proxy with it and runs that mutation's modules (``-x``); the
   mutant is caught when a test that passed in the identity run fails. With ``--every-test`` the
   run goes on past the first failure, so the report says how many tests catch each break
   (and which breaks rest on one test only).

It writes ``<report>/mutants.json`` and ``mutants.md`` and prints one line per mutant.
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conformance.mutants.area_catalogue import MAKER_STREAM
from conformance.mutants.catalogue import all_mutations
from conformance.mutants.mutations import Mutation
from conformance.mutants.proxy import running_proxy
from conformance.wire.areas import AREAS, area_of
from conformance.wire.public_receiver import loopback_public_webhook
from conformance.wire.server import SimulatorProcess, find_rfqsim_bin

ROOT = Path(__file__).resolve().parents[2]
_BLOCKS = itertools.count(1)  # loopback blocks handed to successive pytest runs
TESTS = ROOT / "conformance" / "tests"


@dataclass
class Outcome:
    mode: str
    mutation: str
    breaks: str
    equivalent: bool  # a change the spec allows: "caught" is then a false alarm
    caught: bool
    failed: list[str]  # tests that failed under the mutant (and passed in the identity run)
    ran: int  # tests that ran (passed or failed) under the mutant
    seconds: float
    # The mutation's own area (the maker stream's), else that of its first test module
    # (conformance/wire/areas.py).
    area: str = "other"
    # False when no test of its modules passed this mode's identity run (without control: all
    # of them need it, as a ramp status can only move once the provider is told to pay in):
    # the mutation cannot be judged here, and the mode's score leaves it out, saying so.
    judged: bool = True
    every_test: bool = False  # run past the first failure: `failed` is every test that caught it


def _pytest(
    base_url: str, paths: list[str], extra: list[str], report: Path, timeout: float
) -> dict[str, str]:
    """Run the tests at ``paths`` against ``base_url``; the outcome of each by node id (none
    when the run timed out)."""
    command = [sys.executable, "-m", "pytest", *paths, "--base-url", base_url]
    command += ["-p", "no:cacheprovider", "-q", "--conformance-report", str(report), *extra]
    report.mkdir(parents=True, exist_ok=True)
    # Every run against the shared simulator takes client addresses no earlier run used: the
    # service still holds their buckets and outstanding slots.
    env = {**os.environ, "RFQSIM_LOOPBACK_BLOCK": str(next(_BLOCKS) % 150)}
    try:
        with (report / "pytest.log").open("wb") as log:
            subprocess.run(
                command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, env=env
            )
    except subprocess.TimeoutExpired:
        return {}
    try:
        matrix = json.loads((report / "matrix.json").read_text())
    except (OSError, ValueError):
        return {}
    return {str(t["nodeid"]): str(t["outcome"]) for t in matrix.get("tests") or []}


def _mode_args(mode: str, info: dict[str, Any], workdir: Path) -> list[str]:
    """How the suite learns about the target: nothing more than the base URL with control;
    without it the operator's inputs (the ready file is exactly such a config file) and, in
    place of the QA team's tunnel, a "public" webhook URL on loopback whose certificate the
    simulator trusts (as the suite's own ``--no-control`` gives it,
    conformance/deployment/target.py)."""
    if mode == "control":
        return []
    state_dir = Path(os.environ.get("RFQSIM_STATE_DIR") or ".rfqsim")
    hooks = loopback_public_webhook(
        state_dir if state_dir.is_absolute() else ROOT / state_dir, workdir
    )
    webhook = {
        "webhook_public_url": hooks.webhook_public_url,
        "webhook_listen": hooks.webhook_listen,
        "webhook_tls_cert": hooks.webhook_tls_cert,
        "webhook_tls_key": hooks.webhook_tls_key,
    }
    config = workdir / "operator-inputs.json"
    config.write_text(json.dumps({**info, **webhook}))
    args = ["--conformance-config", str(config)]
    for chain in info.get("chains") or []:
        args += ["--rpc-url", f"{chain['chain_id']}={chain['rpc_url']}"]
    return args


def run_mode(
    mode: str,
    mutations: list[Mutation],
    rfqsim_bin: str,
    timeout: float,
    workdir: Path,
    every_test: bool = False,
) -> list[Outcome]:
    """One mode's runs; each pytest run's log and report stay under ``workdir``."""
    extra_args = ["--no-control-api"] if mode == "no-control" else []
    process = SimulatorProcess(rfqsim_bin, extra_args=extra_args, cwd=ROOT)
    info = process.start()
    outcomes: list[Outcome] = []
    try:
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        args = _mode_args(mode, info, workdir)
        upstream = str(info["api_url"])
        modules = sorted({m for mutation in mutations for m in mutation.modules})
        with running_proxy(upstream, None) as proxy:
            paths = [str(TESTS / m) for m in modules]
            identity = _pytest(proxy.url, paths, args, workdir / "identity", timeout)
        passing = {n for n, outcome in identity.items() if outcome == "passed"}
        print(f"[{mode}] identity run: {len(passing)} of {len(identity)} tests pass")
        for mutation in mutations:
            outcomes.append(
                _run_mutant(mode, mutation, upstream, args, passing, workdir, timeout, every_test)
            )
            last = outcomes[-1]
            verdict = _verdict(last)
            caught_by = f", {len(last.failed)} caught it" if every_test else ""
            print(f"[{mode}] {mutation.name:<32} {verdict:<11} ({last.ran} tests ran{caught_by})")
    finally:
        process.stop()
    return outcomes


def _run_mutant(
    mode: str,
    mutation: Mutation,
    upstream: str,
    args: list[str],
    passing: set[str],
    workdir: Path,
    timeout: float,
    every_test: bool = False,
) -> Outcome:
    selected = [n for n in passing if n.split("::")[0].rsplit("/", 1)[-1] in mutation.modules]
    started = time.monotonic()
    area = mutation.area or area_of(mutation.modules[0])
    if not selected:
        return Outcome(
            mode,
            mutation.name,
            mutation.breaks,
            mutation.equivalent,
            False,
            [],
            0,
            0.0,
            area,
            judged=False,
        )
    ids = [f"{ROOT}/{n}" for n in sorted(selected)]  # not a Path: "//" in a param id stays
    with running_proxy(upstream, mutation) as proxy:
        stop = [] if every_test else ["-x"]
        results = _pytest(proxy.url, ids, [*stop, *args], workdir / mutation.name, timeout)
    failed = sorted(n for n, outcome in results.items() if outcome == "failed" and n in passing)
    ran = sum(1 for outcome in results.values() if outcome in ("passed", "failed"))
    seconds = round(time.monotonic() - started, 1)
    return Outcome(
        mode,
        mutation.name,
        mutation.breaks,
        mutation.equivalent,
        bool(failed),
        failed,
        ran,
        seconds,
        area,
        every_test=every_test,
    )


def _verdict(outcome: Outcome) -> str:
    if not outcome.judged:
        return "not judged"
    if outcome.equivalent:
        return "false alarm" if outcome.caught else "accepted"
    return "caught" if outcome.caught else "survived"


def score(outcomes: list[Outcome], mode: str) -> tuple[int, int, int]:
    """(caught, breaking mutations, false alarms on allowed changes) of one mode."""
    mine = [o for o in outcomes if o.mode == mode and o.judged]
    breaking = [o for o in mine if not o.equivalent]
    alarms = sum(1 for o in mine if o.equivalent and o.caught)
    return sum(1 for o in breaking if o.caught), len(breaking), alarms


def not_judged(outcomes: list[Outcome], mode: str) -> str:
    """The mutations one mode could not judge, by name ("" when it judged them all)."""
    return ", ".join(o.mutation for o in outcomes if o.mode == mode and not o.judged)


def area_scores(outcomes: list[Outcome], mode: str) -> dict[str, tuple[int, int]]:
    """(caught, breaking mutations) per area of one mode, in the areas' order."""
    found: dict[str, tuple[int, int]] = {}
    for o in outcomes:
        if o.mode == mode and o.judged and not o.equivalent:
            caught, total = found.get(o.area, (0, 0))
            found[o.area] = (caught + o.caught, total + 1)
    order = [*AREAS, "other"]
    order.insert(order.index("rfq") + 1, MAKER_STREAM)  # a part of rfq, scored on its own
    return {a: found[a] for a in sorted(found, key=lambda a: order.index(a) if a in order else 99)}


def render(outcomes: list[Outcome]) -> str:
    modes = list(dict.fromkeys(o.mode for o in outcomes))
    lines = ["# Mutation score of the conformance suite", ""]
    lines += [
        "| mode | spec-breaking mutations caught | allowed changes refused (false alarms) |",
        "|---|---|---|",
    ]
    for mode in modes:
        caught, total, alarms = score(outcomes, mode)
        lines.append(f"| {mode} | {caught} of {total} | {alarms} |")
    for mode in modes:
        if unjudged := not_judged(outcomes, mode):
            lines += ["", f"Not judged {mode} (no test of their modules runs there): {unjudged}."]
    areas = list(dict.fromkeys(a for mode in modes for a in area_scores(outcomes, mode)))
    lines += ["", "Per area (the area of a mutation's first test module, or its own):", ""]
    lines += ["| area | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for area in areas:
        cells = []
        for mode in modes:
            caught, total = area_scores(outcomes, mode).get(area, (0, 0))
            cells.append(f"{caught} of {total}" if total else "-")
        lines.append(f"| {area} | " + " | ".join(cells) + " |")
    lines += ["", "| mutation | breaks | " + " | ".join(modes) + " |"]
    lines.append("|---|---|" + "---|" * len(modes))
    by_name: dict[str, dict[str, Outcome]] = {}
    for o in outcomes:
        by_name.setdefault(o.mutation, {})[o.mode] = o
    for name, per_mode in by_name.items():
        breaks = next(iter(per_mode.values())).breaks
        cells = []
        for mode in modes:
            found = per_mode.get(mode)
            verdict = "-" if found is None else _verdict(found)
            cells.append(f"**{verdict}**" if verdict in ("survived", "false alarm") else verdict)
        lines.append(f"| `{name}` | {breaks} | " + " | ".join(cells) + " |")
    lines += _caught_by(outcomes, modes)
    return "\n".join(lines) + "\n"


def _caught_by(outcomes: list[Outcome], modes: list[str]) -> list[str]:
    """With --every-test: how many tests caught each break, and those one test alone caught."""
    lines: list[str] = []
    for mode in modes:
        counted = [
            o
            for o in outcomes
            if o.mode == mode and o.every_test and o.judged and not o.equivalent and o.caught
        ]
        if not counted:
            continue
        alone = [o for o in counted if len(o.failed) == 1]
        lines += ["", f"Tests catching each break, {mode}:", ""]
        lines += ["| mutation | tests that caught it |", "|---|---|"]
        lines += [f"| `{o.mutation}` | {len(o.failed)} |" for o in counted]
        names = ", ".join(f"`{o.mutation}` ({o.failed[0]})" for o in alone) or "none"
        lines += ["", f"Caught by one test only ({len(alone)} of {len(counted)}): {names}."]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.mutants", description=__doc__)
    parser.add_argument(
        "--mode", choices=["control", "no-control", "both"], default="both", help="default both"
    )
    parser.add_argument(
        "-k",
        dest="patterns",
        action="append",
        help="only mutations whose name matches this glob (repeatable)",
    )
    parser.add_argument("--report", default="conformance-report", help="where mutants.md goes")
    parser.add_argument("--rfqsim-bin", help="rfqsim executable (default: the venv's)")
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds per pytest run (default 900)"
    )
    parser.add_argument(
        "--every-test",
        action="store_true",
        help="run every test of a mutation's modules, not just up to the first that fails: the "
        "report counts the tests that catch each break (slower)",
    )
    args = parser.parse_args(argv)
    mutations = all_mutations()
    if args.patterns:
        mutations = [m for m in mutations if any(fnmatch.fnmatch(m.name, p) for p in args.patterns)]
    if not mutations:
        parser.error(f"no mutation matches {args.patterns!r}")
    modes = ["control", "no-control"] if args.mode == "both" else [args.mode]
    rfqsim_bin = find_rfqsim_bin(args.rfqsim_bin, ROOT)
    outcomes: list[Outcome] = []
    report = Path(args.report)
    for mode in modes:
        outcomes += run_mode(
            mode, mutations, rfqsim_bin, args.timeout, report / "mutants" / mode, args.every_test
        )
    report.mkdir(parents=True, exist_ok=True)
    (report / "mutants.json").write_text(json.dumps([asdict(o) for o in outcomes], indent=2) + "\n")
    (report / "mutants.md").write_text(render(outcomes))
    for mode in modes:
        caught, total, alarms = score(outcomes, mode)
        print(f"{mode}: {caught} of {total} mutations caught, {alarms} false alarms")
        if unjudged := not_judged(outcomes, mode):
            print(f"  not judged (no test of their modules runs in this mode): {unjudged}")
        per_area = area_scores(outcomes, mode)
        print("  " + ", ".join(f"{a} {c} of {t}" for a, (c, t) in per_area.items()))
    print(f"report: {report / 'mutants.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
