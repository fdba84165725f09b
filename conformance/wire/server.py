"""Start and stop ``rfqsim serve`` as a black box: a subprocess, a ready file, signals.

The harness knows the simulator only through its command line and the ready-file JSON it
writes once every part (chains, contracts, makers, HTTP) is up, so the same suite can point
at a deployment that has none of this.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from rfqkit.anvil import die_with_parent

DEFAULT_START_TIMEOUT = 60.0
STOP_GRACE_SECONDS = 10.0
_POLL_INTERVAL = 0.1
_TAIL_LINES = 40


class SimulatorStartError(RuntimeError):
    """``rfqsim serve`` did not become ready; the message carries its output tail."""


def find_rfqsim_bin(explicit: str | None, rootdir: Path) -> str:
    """``--rfqsim-bin``, else the venv's ``rfqsim``, else ``rfqsim`` on PATH."""
    if explicit:
        return explicit
    candidates = [
        Path(sys.executable).parent / "rfqsim",
        rootdir / ".venv" / "bin" / "rfqsim",
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("rfqsim")
    if found:
        return found
    raise SimulatorStartError(
        "cannot find the rfqsim executable (looked in "
        + ", ".join(str(c) for c in candidates)
        + " and on PATH); pass --rfqsim-bin or --base-url"
    )


def _tail(path: Path, lines: int = _TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class SimulatorProcess:
    """One ``rfqsim serve`` in its own process group, stopped with SIGTERM then SIGKILL."""

    def __init__(
        self,
        executable: str,
        *,
        seed: int = 1,
        extra_args: Sequence[str] = (),
        start_timeout: float = DEFAULT_START_TIMEOUT,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.executable = executable
        self.env = env  # added to this process's environment
        self.seed = seed
        self.extra_args = list(extra_args)
        self.start_timeout = start_timeout
        self.cwd = cwd
        self.workdir = Path(tempfile.mkdtemp(prefix="rfqsim-conformance-"))
        self.ready_file = self.workdir / "ready.json"
        self.stdout_path = self.workdir / "stdout.log"
        self.stderr_path = self.workdir / "stderr.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._logs: list[IO[bytes]] = []

    @property
    def command(self) -> list[str]:
        return [
            self.executable,
            "serve",
            "--port",
            "0",
            "--rpc-port",
            "0",  # free chain ports too: a `just serve` on 8545 or another worker may hold them
            "--ready-file",
            str(self.ready_file),
            "--seed",
            str(self.seed),
            *self.extra_args,
        ]

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> dict[str, Any]:
        """Start the process and return the ready-file JSON once it appears."""
        stdout = self.stdout_path.open("wb")
        stderr = self.stderr_path.open("wb")
        self._logs = [stdout, stderr]
        try:
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                cwd=self.cwd,
                env={**os.environ, **self.env} if self.env else None,
                start_new_session=True,  # own process group: stop() signals the whole tree
                # ... and it ends with us even when we cannot stop it (killed by a CI timeout).
                preexec_fn=die_with_parent,
            )
        except OSError as exc:
            self.stop()
            raise SimulatorStartError(f"cannot run {self.command!r}: {exc}") from exc
        try:
            return self._wait_ready()
        except SimulatorStartError:
            self.stop()
            raise

    def _wait_ready(self) -> dict[str, Any]:
        assert self._process is not None
        deadline = time.monotonic() + self.start_timeout
        while True:
            ready = self._read_ready()
            if ready is not None:
                return ready
            code = self._process.poll()
            if code is not None:
                raise SimulatorStartError(
                    f"{' '.join(self.command)} exited with status {code} before it was ready.\n"
                    f"stderr (last {_TAIL_LINES} lines):\n{_tail(self.stderr_path)}\n"
                    f"stdout (last lines):\n{_tail(self.stdout_path, 10)}"
                )
            if time.monotonic() > deadline:
                raise SimulatorStartError(
                    f"{' '.join(self.command)} wrote no ready file within "
                    f"{self.start_timeout:.0f} s.\n"
                    f"stderr (last {_TAIL_LINES} lines):\n{_tail(self.stderr_path)}"
                )
            time.sleep(_POLL_INTERVAL)

    def _read_ready(self) -> dict[str, Any] | None:
        try:
            text = self.ready_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None  # still being written
        if not isinstance(data, dict) or not isinstance(data.get("api_url"), str):
            raise SimulatorStartError(f"ready file {self.ready_file} has no api_url: {text[:500]}")
        return data

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL it after the grace period; idempotent."""
        process, self._process = self._process, None
        if process is not None:
            pgid = process.pid  # start_new_session made the child its group leader
            if process.poll() is None:
                _signal_group(pgid, signal.SIGTERM)
                try:
                    process.wait(timeout=STOP_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    _signal_group(pgid, signal.SIGKILL)
                    process.wait()
            # Anything the simulator left in its group (a chain node) goes with it.
            _signal_group(pgid, signal.SIGKILL)
        for log in self._logs:
            log.close()
        self._logs = []
        shutil.rmtree(self.workdir, ignore_errors=True)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
