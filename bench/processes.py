"""Start the processes a benchmark measures, and read their memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
RFQSIM = REPO / ".venv" / "bin" / "rfqsim"


@dataclass
class Started:
    process: subprocess.Popen[bytes]
    seconds_to_ready: float
    info: dict[str, Any]


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def simulator(
    *extra: str, timeout: float = 60.0, env: dict[str, str] | None = None
) -> Iterator[Started]:
    """`rfqsim serve --port 0 --ready-file …`, timed from process start to the ready file."""
    with tempfile.TemporaryDirectory() as tmp, (Path(tmp) / "stderr.log").open("wb") as log:
        ready = Path(tmp) / "ready.json"
        started = time.perf_counter()
        # The log goes to a file, not a pipe: nobody reads a pipe during the run, and a chatty
        # run would fill it and block the simulator on its next log line.
        process = subprocess.Popen(
            [
                str(RFQSIM),
                "serve",
                "--port",
                "0",
                "--rpc-port",
                "0",
                "--ready-file",
                str(ready),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, **env} if env else None,
        )
        try:
            while not ready.exists():
                if process.poll() is not None:
                    tail = (Path(tmp) / "stderr.log").read_bytes().decode()[-2000:]
                    raise RuntimeError(f"rfqsim exited: {tail}")
                if time.perf_counter() - started > timeout:
                    raise RuntimeError("rfqsim did not become ready in time")
                time.sleep(0.005)
            elapsed = time.perf_counter() - started
            yield Started(process, elapsed, json.loads(ready.read_text()))
        finally:
            stop(process)


@contextmanager
def baseline_server() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.baseline_server", str(port_file)], cwd=REPO
        )
        try:
            while not port_file.exists() or not port_file.read_text():
                if process.poll() is not None:
                    raise RuntimeError("baseline server exited")
                time.sleep(0.01)
            yield f"http://127.0.0.1:{port_file.read_text()}"
        finally:
            stop(process)


def rss_mb(pid: int) -> float:
    return float(psutil.Process(pid).memory_info().rss) / 2**20


def child_rss_mb(pid: int) -> dict[int, float]:
    return {
        c.pid: c.memory_info().rss / 2**20 for c in psutil.Process(pid).children(recursive=True)
    }


def pids_alive(pids: list[int]) -> list[int]:
    return [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


__all__ = [
    "Started",
    "baseline_server",
    "child_rss_mb",
    "pids_alive",
    "rss_mb",
    "simulator",
    "stop",
]
