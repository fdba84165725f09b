"""The start-up stress drill: three `rfqsim serve` started at once while two CPU hogs hold both
cores (an integrator's busy CI runner). Each must reach ready and stop cleanly.

What it guards: start-up once failed on a busy machine with "no receipt" while funding (Anvil
writes a log line per RPC call to a pipe that a starved Python thread drained, and stalled when
the pipe filled; 44 receipt pollers every 10 ms filled it fast). Anvil now runs quiet and every
receipt of a chain is awaited in one batched poller (rfqkit/receipts.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.integration.serve_process import RFQSIM, stop, wait_ready

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SERVES = 3
HOGS = 2
HOG_LIMIT_S = 240  # a hog ends by itself even if this test is killed before its `finally`
READY_WITHIN_S = 240  # a safety net for a starved machine, not a timing target


def start_hog() -> subprocess.Popen[bytes]:
    busy = (
        "import time\n"
        f"end = time.monotonic() + {HOG_LIMIT_S}\n"
        "while time.monotonic() < end:\n"
        "    pass\n"
    )
    return subprocess.Popen([sys.executable, "-c", busy])


def test_three_serves_started_at_once_on_a_busy_machine_all_reach_ready(tmp_path: Path) -> None:
    hogs = [start_hog() for _ in range(HOGS)]
    serves: list[tuple[subprocess.Popen[str], Path, Path]] = []
    anvils: list[psutil.Process] = []  # the serves' own nodes (other tests' run beside them)
    try:
        for i in range(SERVES):
            ready, log = tmp_path / f"ready-{i}.json", tmp_path / f"stderr-{i}.log"
            command = [str(RFQSIM), "serve", "--port", "0", "--rpc-port", "0"]
            with log.open("w") as stderr:
                process = subprocess.Popen(
                    [*command, "--ready-file", str(ready)],
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    text=True,
                )
            serves.append((process, ready, log))
        infos = [wait_ready(p, ready, READY_WITHIN_S, log) for p, ready, log in serves]
        children = [c for p, _, _ in serves for c in psutil.Process(p.pid).children(recursive=True)]
        anvils = [c for c in children if "anvil" in c.name()]
        assert len(anvils) == 2 * SERVES
        assert all(hog.poll() is None for hog in hogs), "the hogs ended before every start-up"
        urls = {info["api_url"] for info in infos}
        assert len(urls) == SERVES
        for info in infos:
            assert sorted(c["chain_id"] for c in info["chains"]) == [56, 97]
        for process, _, log in serves:
            assert stop(process) == 0, log.read_text(errors="replace")[-3000:]
            assert "Traceback" not in log.read_text(errors="replace")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        for process, _, _ in serves:
            if process.poll() is None:
                process.kill()
                process.wait()
    _, alive = psutil.wait_procs(anvils, timeout=5)
    assert alive == [], f"Anvil left running: {alive}"
