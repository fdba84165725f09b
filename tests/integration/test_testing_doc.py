"""docs/testing-with-rfqsim.md's complete example runs as written: the code block is copied out
of the document into a test file of its own and run by pytest in a separate process, where the
plugin is found through its entry point (nothing in a conftest), starts a simulator on free
ports and resets it before each test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "testing-with-rfqsim.md"


def test_the_documented_example_passes(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- example: (\S+) -->\n```python\n(.*?)```", text, re.S)
    assert match is not None
    (tmp_path / match.group(1)).write_text(match.group(2))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", match.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout
