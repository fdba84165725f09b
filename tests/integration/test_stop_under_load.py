"""`rfqsim serve` stopped under load, again and again: it must exit promptly and cleanly every
time, with no Anvil left behind (issue: 1 stop in 8 hung forever, the interpreter's exit joining
a thread-pool worker wedged on web3's executor-acquired lock)."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import psutil
import pytest

from bench.mixed_load import MixedLoad, open_limits_and_key
from tests.integration.serve_process import RFQSIM, wait_ready

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STOPS = 20
WORKERS = 20
EXIT_WITHIN_S = 5.0  # the benchmark's target is 3 s; the suite shares two cores with others


def anvil_children(pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(pid).children(recursive=True) if "anvil" in p.name()]


async def _load_then_stop(
    process: subprocess.Popen[str], info: dict[str, Any], load_s: float
) -> float | None:
    """Mixed load from WORKERS clients; SIGTERM after `load_s` with the load still running.
    Seconds from the signal to the exit, None if it still runs well past the target."""
    api = info["api_url"]
    async with aiohttp.ClientSession() as session:
        key = await open_limits_and_key(session, api)
    load = MixedLoad(api, info, key)
    stop_load = asyncio.Event()
    workers = asyncio.create_task(load.run(WORKERS, stop_load))
    try:
        await asyncio.sleep(load_s)
        assert load.counts["request 200"] > 0, load.counts
        process.send_signal(signal.SIGTERM)
        began = time.monotonic()
        while process.poll() is None:
            if time.monotonic() - began > EXIT_WITHIN_S + 10:
                return None
            await asyncio.sleep(0.01)
        return time.monotonic() - began
    finally:
        stop_load.set()
        await workers


@pytest.mark.parametrize("trial", range(STOPS))
def test_a_stop_under_load_exits_within_seconds(tmp_path: Path, trial: int) -> None:
    """One of twenty stops, each a test of its own (they spread over the workers, and each
    start-up is counted against its own timeout, not the others')."""
    rng = random.Random(14 + trial)
    ready = tmp_path / f"ready-{trial}.json"
    log = tmp_path / f"stderr-{trial}.log"
    with log.open("w") as stderr:
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
            ],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
        )
    try:
        info = wait_ready(process, ready, log=log)
        anvils = anvil_children(process.pid)
        assert len(anvils) == 2
        exit_s = asyncio.run(_load_then_stop(process, info, rng.uniform(1.0, 2.5)))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    logged = log.read_text(errors="replace")
    assert exit_s is not None, f"stop {trial}: still running {EXIT_WITHIN_S + 10} s after it"
    assert process.returncode == 0, f"stop {trial}: status {process.returncode}\n{logged}"
    assert exit_s <= EXIT_WITHIN_S, f"stop {trial}: exit took {exit_s:.2f} s"
    assert "Traceback" not in logged, f"stop {trial}:\n{logged[-3000:]}"
    _, alive = psutil.wait_procs(anvils, timeout=5)
    assert alive == [], f"stop {trial}: Anvil left running: {alive}"
    assert not ready.exists(), f"stop {trial}: the ready file outlived the process"
