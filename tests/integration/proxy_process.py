"""`rfqsim proxy` as a real child process for integration tests: started on a free port in front
of an upstream, stopped with SIGINT, its report read back."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.integration.serve_process import RFQSIM

START_TIMEOUT_S = 60.0


@dataclass
class RunningProxy:
    process: subprocess.Popen[str]
    url: str
    report_dir: Path
    lines: list[str] = field(default_factory=list)  # everything it printed, as it printed it
    exit_code: int | None = None

    def report(self) -> dict[str, Any]:
        """violations.json, once the proxy has stopped."""
        assert self.exit_code is not None, "stop the proxy first"
        return dict(json.loads((self.report_dir / "violations.json").read_text()))

    def stop(self) -> int:
        if self.exit_code is None:
            self.process.send_signal(signal.SIGINT)
            self.exit_code = self.process.wait(timeout=30)
        return self.exit_code


def service_violations(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in report["violations"] if v["side"] == "service"]


def summary(violations: list[dict[str, Any]]) -> list[str]:
    """One line per violation, for an assertion message."""
    return [
        f"{v['side']} {v['rule']} {v['method']} {v['path']} -> {v['status']}: {v['message']}"
        for v in violations
    ]


@contextmanager
def proxy(upstream: str, report_dir: Path, *args: str) -> Iterator[RunningProxy]:
    """A proxy listening on a free loopback port; stopped (SIGINT) on leaving if still running."""
    process = subprocess.Popen(
        [
            str(RFQSIM),
            "proxy",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            "--report",
            str(report_dir),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    printed: queue.Queue[str] = queue.Queue()
    running = RunningProxy(process, "", report_dir)

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            running.lines.append(line.rstrip("\n"))
            printed.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while not running.url:
            try:
                line = printed.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"rfqsim proxy did not start: {running.lines}") from None
            if "listening on " in line:
                running.url = line.split("listening on ", 1)[1].split(" ", 1)[0]
        yield running
    finally:
        if process.poll() is None:
            running.stop()
        reader.join(timeout=10)
        process.stdout.close()
