"""scripts/bootstrap.sh, the step `just serve` and `just test` start with: the first, slow
install says what it does and how long it takes and shows progress; a failure shows pip's last
lines; a second run with nothing changed is silent. Run on a copy with a stand-in for the
virtualenv's python (no network, seconds)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
# Stands in for .venv/bin/python: answers `-m pip install ...` like pip does.
if [ -n "${FAKE_PIP_FAIL:-}" ] && [[ "$*" == *"-e"* ]]; then
  echo "Collecting aiohttp==3.14.5"
  echo "ERROR: No matching distribution found for aiohttp==3.14.5"
  exit 1
fi
if [[ "$*" == *"-e"* ]]; then
  echo "Collecting aiohttp==3.14.5"
  echo "Collecting pydantic==2.14.3"
  echo "Installing collected packages: aiohttp, pydantic"
  echo "Successfully installed aiohttp-3.14.5 pydantic-2.14.3"
fi
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "bootstrap.sh", tmp_path / "scripts" / "bootstrap.sh")
    for name in ("pyproject.toml", "package.json", "package-lock.json"):
        shutil.copy(REPO / name, tmp_path / name)
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    # npm's inputs unchanged and installed: only the Python step runs.
    (tmp_path / "node_modules" / "@foundry-rs").mkdir(parents=True)
    stamps = tmp_path / ".venv" / ".rfqsim-stamps"
    stamps.mkdir()
    npm_inputs = (tmp_path / "package.json").read_bytes() + (
        tmp_path / "package-lock.json"
    ).read_bytes()
    (stamps / "npm").write_text(hashlib.sha256(npm_inputs).hexdigest() + "\n")
    return tmp_path


def bootstrap(project: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "scripts/bootstrap.sh"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **env},
    )


def test_the_first_install_says_what_and_how_long_then_a_rerun_is_silent(project: Path) -> None:
    first = bootstrap(project)
    assert first.returncode == 0, first.stderr
    assert "installing the pinned Python packages" in first.stderr
    assert "about a minute" in first.stderr
    assert "Collecting aiohttp==3.14.5" in first.stderr  # progress, not a silent minute
    assert "Python packages installed in" in first.stderr
    again = bootstrap(project)
    assert again.returncode == 0
    assert again.stderr == ""


def test_a_failed_install_shows_pips_last_lines_and_fails(project: Path) -> None:
    result = bootstrap(project, FAKE_PIP_FAIL="1")
    assert result.returncode == 1
    assert "bootstrap: pip failed" in result.stderr
    assert "No matching distribution found" in result.stderr
