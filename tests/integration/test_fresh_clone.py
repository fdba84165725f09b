"""A fresh clone stays clean: the set-up `just serve` and `just test` start with
(scripts/bootstrap.sh) installs the pinned Python packages and npm tools for real, changes no
tracked file (package-lock.json included), and a second run installs nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
# The set-up's own inputs, taken from the working tree so the test checks what is on disk.
SETUP_FILES = ("scripts/bootstrap.sh", "pyproject.toml", "package.json", "package-lock.json")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=120
    ).stdout


def bootstrap(clone: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    return subprocess.run(
        ["bash", "scripts/bootstrap.sh"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_set_up_on_a_fresh_clone_changes_no_tracked_file_and_a_rerun_installs_nothing(
    tmp_path: Path,
) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone))
    for name in SETUP_FILES:
        shutil.copy(REPO / name, clone / name)
    git(clone, "add", *SETUP_FILES)
    identity = ("-c", "user.name=rfqsim", "-c", "user.email=rfqsim@localhost")
    git(clone, *identity, "commit", "--quiet", "--allow-empty", "--message", "working tree")
    assert git(clone, "status", "--porcelain") == ""

    first = bootstrap(clone)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "installing Anvil, solc and viem" in first.stderr
    assert (clone / "node_modules" / "@foundry-rs" / "anvil").is_dir()
    assert git(clone, "status", "--porcelain") == ""

    again = bootstrap(clone)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr == ""  # nothing reinstalled: neither pip nor npm ran
    assert git(clone, "status", "--porcelain") == ""
