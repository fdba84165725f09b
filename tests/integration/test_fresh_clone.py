"""The set-up `just serve` and `just test` start with (scripts/bootstrap.sh) is idempotent: on a
checkout it has set up, a second run installs nothing (neither pip nor npm runs, nothing is
printed) and changes no file git tracks.

The first, real install on a fresh clone is the project's CI itself: `.ci/run` starts from a
clean clone, so its `just test` runs the whole set-up (a new virtualenv, the pinned packages,
`npm ci`), and after the run it fails when any tracked file changed or an unignored one
appeared (docs/testing.md). Doing that install again here cost the suite two minutes of one
worker on every run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def git_status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_a_second_set_up_installs_nothing_and_changes_no_tracked_file() -> None:
    stamps = REPO / ".venv" / ".rfqsim-stamps"
    assert (stamps / "python").is_file(), "run `just setup` (or `just test`) first"
    before = git_status()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    again = subprocess.run(
        ["bash", "scripts/bootstrap.sh"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr == ""  # nothing reinstalled: neither pip nor npm ran
    assert (REPO / "node_modules" / "@foundry-rs" / "anvil").is_dir()
    assert git_status() == before
