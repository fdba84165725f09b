"""Run one load profile headless, bounded, against a loopback simulator, and keep the reports.

    python -m loadtests.run PROFILE [--host URL | --start-simulator] [--users N]
        [--spawn-rate R] [--run-time 60s] [--shape steady|ramp|spike] [--budget-ms 750]
        [--tolerance-ms 30] [--slo-percentile 99] [--max-error-ratio 0.01]
        [--max-no-quote-ratio 0.05] [--report-dir DIR]
        [--master [--expect-workers N] | --worker [--master-host H] | --processes N]
        [-- MORE LOCUST OPTIONS]

Without ``--host`` it starts ``rfqsim serve --port 0`` itself, waits for its ready file, runs
locust against it and stops it afterwards. Reports go to ``loadtests/reports/<profile>-<time>/``:
``report.html`` (ours: the verdict, latency histograms, the makers' wait against the simulator's
own time), ``slo.json`` (every figure), locust's ``locust.html``, ``locust_stats.csv`` (and the
other CSVs), ``locust.json`` and ``locust.log`` (locust's own output: its stats tables every 2 s
and at the end).
The terminal shows one progress line (requests, failures, and the judged requests' p50 and SLO
percentile so far: the figures slo.json and report.html will have) and, at the end, the verdict
with each check. The exit code is locust's, which the profile's SLO sets on
the master: 0 passed, 1 a threshold violated, 2 could not run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loadtests.common import (
    DEFAULT_RUN_TIME_S,
    DEFAULT_USERS,
    PROFILES_DIR,
    PROGRESS_FILE,
    REPO,
    REPORTS_DIR,
    SHAPES,
    NotLoopback,
    check_bounds,
    ensure_loopback,
    parse_duration_s,
)
from loadtests.sim_added import summary_lines
from rfqkit.free_ports import unclaimed_port

EXIT_NOT_RUN = 2
READY_TIMEOUT_S = 120.0
# Beyond --run-time: spawn, setup, stop timeout, a profile's drain (webhooks), reports.
WATCHDOG_EXTRA_S = 180.0
STOP_TIMEOUT_S = 5


def profiles() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.py") if not p.stem.startswith("_"))


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="python -m loadtests.run",
        description="Run a locust profile headless against a loopback rfqsim (bounded).",
        epilog="Options after `--` go to locust unchanged (e.g. -- --cancel-share 0.5 "
        "--keyless-share 0 --takers 64 --loglevel DEBUG).",
    )
    cli.add_argument("profile", choices=profiles())
    cli.add_argument("--host", help="loopback base URL of a running simulator")
    cli.add_argument(
        "--start-simulator",
        action="store_true",
        help="start `rfqsim serve --port 0` for the run (the default without --host)",
    )
    cli.add_argument(
        "--simulator-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for `rfqsim serve` (repeat), e.g. --simulator-arg=--seed=7",
    )
    cli.add_argument("--users", "-u", type=int, default=DEFAULT_USERS)
    cli.add_argument("--spawn-rate", "-r", type=float, default=None)
    cli.add_argument("--run-time", "-t", default=f"{DEFAULT_RUN_TIME_S}s")
    cli.add_argument("--shape", choices=SHAPES, default="steady")
    cli.add_argument("--budget-ms", type=float, default=None)
    cli.add_argument("--tolerance-ms", type=float, default=None)
    cli.add_argument("--slo-percentile", type=float, default=None)
    cli.add_argument("--max-error-ratio", type=float, default=None)
    cli.add_argument("--max-no-quote-ratio", type=float, default=None)
    cli.add_argument("--report-dir", type=Path, default=None)
    mode = cli.add_mutually_exclusive_group()
    mode.add_argument("--master", action="store_true", help="run as a locust master")
    mode.add_argument("--worker", action="store_true", help="run as a locust worker")
    cli.add_argument("--expect-workers", type=int, default=1)
    cli.add_argument("--master-host", default="127.0.0.1", help="(worker) where the master is")
    cli.add_argument(
        "--master-port", type=int, default=5557, help="(master, worker) the master's port"
    )
    cli.add_argument(
        "--master-bind-host",
        default="127.0.0.1",
        help="(master) interface for workers; 127.0.0.1 unless workers run elsewhere",
    )
    cli.add_argument(
        "--processes",
        type=int,
        default=None,
        help="fork N local worker processes (locust --processes; -1: one per CPU core)",
    )
    return cli


def locust_command(
    args: argparse.Namespace, host: str | None, run_time_s: int, report_dir: Path | None
) -> list[str]:
    profile = PROFILES_DIR / f"{args.profile}.py"
    command = [sys.executable, "-m", "locust", "-f", str(profile)]
    if args.processes is not None:
        command += ["--processes", str(args.processes)]
    if args.worker:
        return [
            *command,
            "--worker",
            "--master-host",
            args.master_host,
            "--master-port",
            str(args.master_port),
        ]
    assert host is not None
    assert report_dir is not None
    spawn_rate = args.spawn_rate if args.spawn_rate is not None else max(1.0, args.users / 5)
    command += [
        "--headless",
        "--host",
        host,
        "--users",
        str(args.users),
        "--spawn-rate",
        f"{spawn_rate:g}",
        "--run-time",
        f"{run_time_s}s",
        "--stop-timeout",
        str(STOP_TIMEOUT_S),
        "--shape",
        args.shape,
        "--csv",
        str(report_dir / "locust"),
        "--html",
        str(report_dir / "locust.html"),  # report.html is ours (loadtests/report_page.py)
        "--json-file",
        str(report_dir / "locust"),  # locust adds ".json"
        "--slo-summary",
        str(report_dir / "slo.json"),
    ]
    for option in (
        "budget_ms",
        "tolerance_ms",
        "slo_percentile",
        "max_error_ratio",
        "max_no_quote_ratio",
    ):
        value = getattr(args, option)
        if value is not None:
            command += ["--" + option.replace("_", "-"), f"{value:g}"]
    if args.master:
        command += [
            "--master",
            "--master-bind-host",
            args.master_bind_host,
            "--master-bind-port",
            str(args.master_port),
            "--expect-workers",
            str(args.expect_workers),
        ]
    elif args.processes is not None:
        # The forked workers find their master on a port of this run's own: locust's default
        # (5557) would join two runs on one machine (each master counting the other's workers).
        port, bind = str(unclaimed_port()), args.master_bind_host
        command += ["--master-bind-host", bind, "--master-bind-port", port]
        command += ["--master-host", "127.0.0.1" if bind in ("0.0.0.0", "*") else bind]
        command += ["--master-port", port]
    return command


def rfqsim_executable() -> str:
    beside = Path(sys.executable).parent / "rfqsim"
    if beside.exists():
        return str(beside)
    found = shutil.which("rfqsim")
    if found is None:
        raise FileNotFoundError("rfqsim is not installed (run `just setup`)")
    return found


@contextmanager
def simulator(extra: list[str], log_path: Path) -> Iterator[dict[str, Any]]:
    """``rfqsim serve --port 0`` for the run; its ready-file facts while it runs."""
    with tempfile.TemporaryDirectory(prefix="rfqsim-load-") as scratch:
        ready = Path(scratch) / "ready.json"  # holds demo keys: kept out of the reports
        with log_path.open("w", encoding="utf-8") as log:
            process = subprocess.Popen(
                [
                    rfqsim_executable(),
                    "serve",
                    "--port",
                    "0",
                    "--rpc-port",
                    "0",
                    "--ready-file",
                    str(ready),
                    *extra,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
            )
            try:
                deadline = time.monotonic() + READY_TIMEOUT_S
                while not ready.exists():
                    if process.poll() is not None:
                        raise RuntimeError(
                            f"rfqsim serve exited with {process.returncode}; see {log_path}"
                        )
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"rfqsim serve not ready in {READY_TIMEOUT_S:g} s")
                    time.sleep(0.1)
                yield dict(json.loads(ready.read_text(encoding="utf-8")))
            finally:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
                    try:
                        process.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait()


PROGRESS_EVERY_S = 5.0  # the master rewrites progress.json every 2 s


def progress_line(progress_json: Path, elapsed_s: float, run_time_s: float) -> str | None:
    """One line from the master's progress.json (loadtests/harness.py): the figures the report
    will have, so far; None before it exists."""
    try:
        now = json.loads(progress_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    line = (
        f"{min(elapsed_s, run_time_s):.0f}/{run_time_s:.0f} s  "
        f"{int(now['requests']):,} requests  {int(now['errors']):,} failures"
    )
    if now.get("judged"):
        names = ", ".join(now["judged_requests"])
        line += (
            f"  {names}: p50 {now['p50_ms']:g} ms  p{now['percentile']:g} "
            f"{now['slo_percentile_ms']:g} ms  {int(now['over_budget']):,} over the budget"
        )
    return line


def run_locust(
    command: list[str],
    timeout_s: float | None,
    *,
    log_path: Path | None = None,
    run_time_s: float = 0,
) -> int:
    """Run locust; with `log_path` its output goes there and a progress line is shown instead
    (its stats tables every 2 s drown the terminal; report.html and the CSVs keep them)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    with contextlib.ExitStack() as stack:
        output = None if log_path is None else stack.enter_context(log_path.open("w"))
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT if output else None
        )
        started = time.monotonic()
        deadline = None if timeout_s is None else started + timeout_s
        tty = sys.stdout.isatty()
        shown = False
        try:
            while True:
                wait_s = PROGRESS_EVERY_S
                if deadline is not None:
                    wait_s = max(0.0, min(wait_s, deadline - time.monotonic()))
                try:
                    code = process.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise
                if log_path is not None:
                    now = log_path.with_name(PROGRESS_FILE)
                    line = progress_line(now, time.monotonic() - started, run_time_s)
                    if line is not None:
                        start, end = ("\r", "") if tty else ("", "\n")
                        print(f"{start}loadtests: {line}", end=end, flush=True)
                        shown = True
        except subprocess.TimeoutExpired:
            print(
                f"\nloadtests: locust overran its bound ({timeout_s:g} s); stopping it", flush=True
            )
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            return EXIT_NOT_RUN
        except KeyboardInterrupt:
            process.send_signal(signal.SIGINT)
            return process.wait()
        if shown and tty:
            print(flush=True)
        return code


def report_verdict(report_dir: Path) -> None:
    summary_path = report_dir / "slo.json"
    if not summary_path.exists():
        print(f"loadtests: no SLO summary was written (reports in {report_dir})", flush=True)
        return
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    verdict = "PASSED" if summary["passed"] else "FAILED"
    print(f"\nloadtests: {summary['profile']} SLO {verdict} (exit {summary['exit_code']})")
    for check in summary["checks"]:
        print(f"  {'pass' if check['passed'] else 'FAIL'}  {check['name']}: {check['detail']}")
    if "simulator_added" in summary:
        for line in summary_lines(summary["simulator_added"]):
            print(line if line.startswith(("WARNING", "  ")) else f"  {line}")
    print(
        f"reports: {report_dir} (report.html: the verdict, latency histograms and the makers' "
        "wait against the simulator's own time; locust.html and locust_stats.csv: locust's "
        "tables; locust.log: locust's output; slo.json: all figures)",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1 :]
    cli = parser()
    args = cli.parse_args(argv)
    if args.master and args.processes is not None:
        cli.error("--master and --processes do not combine: --processes makes this the master")
    if args.worker:
        return run_locust([*locust_command(args, None, 0, None), *passthrough], None)
    try:
        run_time_s = parse_duration_s(args.run_time)
        check_bounds(args.users, args.spawn_rate, run_time_s)
        if args.host:
            ensure_loopback(args.host)
    except (NotLoopback, ValueError) as exc:
        print(f"loadtests: {exc}", file=sys.stderr)
        return EXIT_NOT_RUN
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    report_dir = args.report_dir or REPORTS_DIR / f"{args.profile}-{stamp}"
    report_dir.mkdir(parents=True, exist_ok=True)
    timeout_s = run_time_s + WATCHDOG_EXTRA_S
    if args.host and not args.start_simulator:
        command = locust_command(args, args.host, run_time_s, report_dir)
        code = run_locust(
            [*command, *passthrough],
            timeout_s,
            log_path=report_dir / "locust.log",
            run_time_s=run_time_s,
        )
    else:
        try:
            with simulator(args.simulator_arg, report_dir / "simulator.log") as ready:
                host = ensure_loopback(str(ready["api_url"]))
                print(f"loadtests: simulator ready at {host}", flush=True)
                command = locust_command(args, host, run_time_s, report_dir)
                code = run_locust(
                    [*command, *passthrough],
                    timeout_s,
                    log_path=report_dir / "locust.log",
                    run_time_s=run_time_s,
                )
        except (RuntimeError, FileNotFoundError, NotLoopback) as exc:
            print(f"loadtests: {exc}", file=sys.stderr)
            return EXIT_NOT_RUN
    report_verdict(report_dir)
    return code


if __name__ == "__main__":
    sys.exit(main())
