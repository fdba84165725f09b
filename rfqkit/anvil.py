"""Start and stop Anvil nodes (Foundry's local EVM) from the pinned npm package.

Each node is a child process bound to a free loopback port. The child is asked by the kernel to
die with its parent (PR_SET_PDEATHSIG), so not even a SIGKILL of the simulator leaves an orphan.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO_ROOT = Path(__file__).resolve().parents[1]
_PR_SET_PDEATHSIG = 1


class AnvilStartError(RuntimeError):
    """Anvil could not be found or did not come up; the message names the binary and the port."""


def find_anvil_binary() -> Path:
    """The native anvil binary shipped by `@foundry-rs/anvil-<os>-<arch>` (not the node wrapper,
    which would add start-up time and does not forward signals)."""
    override = os.environ.get("RFQSIM_ANVIL")
    if override:
        return Path(override)
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    system = platform.system().lower()
    candidate = (
        REPO_ROOT / "node_modules" / "@foundry-rs" / f"anvil-{system}-{arch}" / "bin" / "anvil"
    )
    if candidate.exists():
        return candidate
    on_path = shutil.which("anvil")
    if on_path:
        return Path(on_path)
    raise AnvilStartError(
        f"anvil binary not found at {candidate} nor on PATH; run `just setup` "
        "(installs @foundry-rs/anvil from the npm registry)"
    )


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """preexec_fn of a child that must not outlive us: PR_SET_PDEATHSIG (SIGTERM)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def stop_child(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Terminate a child server and reap it; SIGKILL after `timeout` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)


@dataclass
class AnvilNode:
    """One running Anvil process."""

    chain_id: int
    host: str
    port: int
    binary: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    errors: list[str] = field(default_factory=list, repr=False)  # what Anvil wrote to stderr
    pump: threading.Thread | None = field(default=None, repr=False)  # drains Anvil's stderr

    @property
    def rpc_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def is_running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the node and reap it; escalates to SIGKILL after `timeout` seconds."""
        stop_child(self.process, timeout)
        if self.pump is not None:
            self.pump.join(timeout=timeout)  # stderr hits EOF once the process is gone
        if self.process.stderr is not None:
            self.process.stderr.close()


def listening_port(pid: int) -> int | None:
    """The TCP port process `pid` listens on (Anvil opens one: its RPC), as the kernel has it;
    None while it listens nowhere yet."""
    try:
        connections = psutil.Process(pid).net_connections(kind="tcp")
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    for connection in connections:
        if connection.status == psutil.CONN_LISTEN:
            return int(connection.laddr.port)
    return None


def start_anvil(
    chain_id: int,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    binary: Path | None = None,
    timestamp: int | None = None,
    startup_timeout: float = 20.0,
    extra_args: tuple[str, ...] = (),
    cors: bool = False,
) -> AnvilNode:
    """Start one Anvil node and wait until it listens.

    `port=0` lets Anvil bind a free port itself (no race between choosing and binding); the
    port it chose is read from the kernel's socket table. Automining is on: every transaction
    is mined into its own block at once. Without `cors` the node runs with `--no-cors`:
    Anvil's default `Access-Control-Allow-Origin: *` would let any web page call
    `anvil_setBalance` and read the answer (docs/security.md).

    Anvil runs `--quiet`. Otherwise it writes a line for every RPC call and several for every
    block to its standard output, synchronously: once a pipe we read fills, Anvil stops
    answering and mining until we drain it. Our drain was a Python thread, so on a busy machine
    (the thread waiting for the GIL and a core) the node stalled, receipts stopped coming, and
    start-up failed with "no receipt". Only errors remain (stderr), a few lines at the most.
    """
    anvil = binary or find_anvil_binary()
    if not anvil.exists():
        raise AnvilStartError(
            f"anvil binary {anvil} does not exist (chain {chain_id}, port {port})"
        )
    args = [
        str(anvil),
        "--quiet",
        "--host",
        host,
        "--port",
        str(port),
        "--chain-id",
        str(chain_id),
        "--accounts",
        "0",  # our own deterministic keys are funded explicitly, see chain deployment
        "--disable-console-log",
        "--disable-default-create2-deployer",
        *(("--timestamp", str(timestamp)) if timestamp is not None else ()),
        *(() if cors else ("--no-cors",)),
        *extra_args,
    ]
    try:
        process = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent,  # only sets PDEATHSIG; takes no locks
        )
    except OSError as exc:
        raise AnvilStartError(
            f"could not execute anvil binary {anvil} (chain {chain_id}, port {port}): {exc}"
        ) from exc
    assert process.stderr is not None
    errors: list[str] = []

    def pump() -> None:
        # Keeps what Anvil says of errors, for the message below; never in Anvil's way, since
        # a quiet Anvil writes nothing else.
        assert process.stderr is not None
        for raw in process.stderr:
            if len(errors) < 200:
                errors.append(raw.decode(errors="replace").rstrip())

    pump_thread = threading.Thread(target=pump, name=f"anvil-{chain_id}-stderr", daemon=True)
    pump_thread.start()
    deadline = time.monotonic() + startup_timeout
    found = None
    while process.poll() is None and time.monotonic() <= deadline:
        found = listening_port(process.pid)
        if found is not None and (port == 0 or found == port):
            break
        found = None
        time.sleep(0.01)
    if found is None:
        if process.poll() is None:
            process.kill()
        process.wait()
        pump_thread.join(timeout=5)
        process.stderr.close()
        tail = "\n".join(errors[-10:]) or "(it said nothing)"
        raise AnvilStartError(
            f"anvil ({anvil}) failed to start for chain {chain_id} on {host}:{port} "
            f"(exit code {process.returncode}):\n{tail}"
        )
    return AnvilNode(
        chain_id=chain_id,
        host=host,
        port=found,
        binary=anvil,
        process=process,
        errors=errors,
        pump=pump_thread,
    )
