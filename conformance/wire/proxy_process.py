"""Start and stop ``rfqsim proxy`` as a black box, as server.py does ``rfqsim serve``: a
subprocess on a free loopback port in front of an upstream, stopped with SIGINT, its report
(violations.json) read back. The harness's ``--through-proxy`` runs the suite through one; the
proxy's own tests use it too."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rfqkit.anvil import die_with_parent

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


class ProxyStartError(RuntimeError):
    """``rfqsim proxy`` did not start listening; the message carries what it printed."""


@dataclass
class ProxyProcess:
    executable: str
    upstream: str
    report_dir: Path
    args: tuple[str, ...] = ()
    url: str = ""  # where it listens, once started
    lines: list[str] = field(default_factory=list)  # everything it printed, as it printed it
    exit_code: int | None = None
    _process: subprocess.Popen[str] | None = field(default=None, repr=False)
    _reader: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> str:
        """Start it and return its URL once it listens."""
        self._process = process = subprocess.Popen(
            [
                self.executable,
                "proxy",
                "--upstream",
                self.upstream,
                "--listen",
                "127.0.0.1:0",
                "--report",
                str(self.report_dir),
                *self.args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # a terminal's Ctrl-C reaches the harness only
            preexec_fn=die_with_parent,  # and it ends with us even when we cannot stop it
        )
        printed: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.lines.append(line.rstrip("\n"))
                printed.put(line)
            printed.put(None)  # it exited

        self._reader = threading.Thread(target=pump, name="rfqsim-proxy-output", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.url:
            try:
                line = printed.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.stop()
                raise ProxyStartError(f"rfqsim proxy did not start: {self.lines[-20:]}")
            if "listening on " in line:
                self.url = line.split("listening on ", 1)[1].split(" ", 1)[0]
        return self.url

    def stop(self) -> int:
        """SIGINT (it writes its report then), and its exit status; idempotent."""
        process = self._process
        if process is None:
            return self.exit_code if self.exit_code is not None else 0
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            self.exit_code = process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            self.exit_code = process.wait()
        self._process = None
        if self._reader is not None:
            self._reader.join(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
        return self.exit_code

    def report(self) -> dict[str, Any]:
        """violations.json, once the proxy has stopped."""
        assert self.exit_code is not None, "stop the proxy first"
        return dict(json.loads((self.report_dir / "violations.json").read_text()))


def service_violations(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in report["violations"] if v["side"] == "service"]


def accepted_client_violations(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Client-side findings the service accepted (status below 400): a request that breaks the
    spec and was not refused. The suite sends broken requests on purpose, but only to see them
    refused."""
    return [v for v in report["violations"] if v["side"] == "client" and v["status"] < 400]


def summary(violations: list[dict[str, Any]]) -> list[str]:
    """One line per violation."""
    return [
        f"{v['side']} {v['rule']} {v['method']} {v['path']} -> {v['status']}: {v['message']}"
        for v in violations
    ]


def findings_of(report: dict[str, Any]) -> dict[str, Any]:
    """What a run through the proxy is judged by, as JSON (an xdist worker hands it on)."""
    return {
        "exchanges": int(report["exchanges"]),
        "rules": sorted(report["rules_exercised"]),
        "client": sum(1 for v in report["violations"] if v["side"] == "client"),
        "service": summary(service_violations(report)),
        "accepted": summary(accepted_client_violations(report)),
    }


def verdict(findings: list[dict[str, Any]]) -> tuple[bool, list[str]]:
    """(passed, lines to print) over every proxy of a run: it passes when the proxy found no
    fault of the service and the service refused every broken request the suite sent."""
    service = [line for f in findings for line in f["service"]]
    accepted = [line for f in findings for line in f["accepted"]]
    rules = {rule for f in findings for rule in f["rules"]}
    head = (
        f"through rfqsim proxy: {sum(f['exchanges'] for f in findings)} exchanges, "
        f"{len(rules)} rules exercised, {len(service)} faults of the service, "
        f"{sum(f['client'] for f in findings)} client findings "
        f"({len(accepted)} of them accepted by the service)"
    )
    return not service and not accepted, [head, *(f"  {line}" for line in service + accepted)]
