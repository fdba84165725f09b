"""Run `rfqsim serve` as a real child process for integration tests."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RFQSIM = REPO / ".venv" / "bin" / "rfqsim"


@dataclass
class Served:
    process: subprocess.Popen[str]
    info: dict[str, Any]

    @property
    def api_url(self) -> str:
        return str(self.info["api_url"])


def wait_ready(
    process: subprocess.Popen[str], ready: Path, timeout: float = 60, log: Path | None = None
) -> dict[str, Any]:
    """The ready file's facts once it appears; the process's stderr (its pipe, or the file
    `log` it writes to) when it exits first, or when it is not ready in time: it is then told
    to stop (SIGTERM), and its stop watchdog writes where each thread and task waited."""
    deadline = time.monotonic() + timeout
    while not ready.exists():
        if process.poll() is not None:
            raise AssertionError(f"rfqsim exited {process.returncode}: {_stderr(process, log)}")
        if time.monotonic() > deadline:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)  # the watchdog's deadline, then its dump
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            raise AssertionError(
                f"rfqsim did not write its ready file within {timeout:g} s; stopped, it wrote: "
                f"{_stderr(process, log)}"
            )
        time.sleep(0.02)
    return dict(json.loads(ready.read_text()))


def _stderr(process: subprocess.Popen[str], log: Path | None) -> str:
    """The last of what an exited process wrote to stderr."""
    if log is not None:
        return log.read_text(errors="replace")[-12000:]
    assert process.stderr is not None, "pass the file stderr goes to as `log`"
    return process.stderr.read()[-12000:]


def stop(process: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    if process.poll() is None:
        process.send_signal(sig)
    return process.wait(timeout=20)


@contextmanager
def serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    ready = tmp_path / "ready.json"
    ready.unlink(missing_ok=True)  # one a killed process left would name its dead port
    process = subprocess.Popen(
        [str(RFQSIM), "serve", "--port", "0", "--rpc-port", "0", "--ready-file", str(ready), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        yield Served(process, wait_ready(process, ready))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()
