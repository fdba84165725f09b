"""A load profile run as a user runs it (python -m loadtests.run) and its summary read: shared
by the load-test tests and the storm through rfqsim proxy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.serve_process import REPO

RUN_TIMEOUT_S = 90


def run_profile(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """``python -m loadtests.run rfq_storm ARGS``: (exit code, slo.json, output)."""
    reports = tmp_path / "reports"
    env = {**os.environ, "RFQSIM_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadtests.run",
            "rfq_storm",
            "--report-dir",
            str(reports),
            *args,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    output = done.stdout + done.stderr
    summary_path = reports / "slo.json"
    # The exit status too: an empty output with a negative one is a run killed by a signal.
    assert summary_path.exists(), f"exit status {done.returncode}\n{output[-3000:]}"
    return done.returncode, json.loads(summary_path.read_text()), output


def checks_by_name(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in summary["checks"]}
