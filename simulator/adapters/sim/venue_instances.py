"""The other instances of `rfqsim serve --instances N` (docs/scaling.md): N - 1 more `rfqsim
serve` processes, started by the first once its chains, deployment and engine are up, each
listening on the venue's address beside it (the first passes its socket down; each binds one of
its own there with SO_REUSEPORT, so the kernel spreads new connections evenly), on the first
one's chains (`--rpc-url`) and
engine (`--redis-url`), without a fleet of their own (the first one's makers are linked to
them). Each also listens on a loopback port of its own, where the others send what it must
serve. They die with the first (PR_SET_PDEATHSIG) and are stopped before it; one that exits
while the venue runs is seen by the first within a tenth of a second (`watch`), which takes it
off the venue's list at once (its RFQs are taken over without waiting for its lease to end)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from rfqkit.anvil import die_with_parent

# Options of the first instance's command line the others do not take over: each gets its
# own value (or none) in `_overrides`.
_OWN_OPTIONS = frozenset(
    {
        "--instances",
        "--ready-file",
        "--scenario",
        "--port",
        "--rpc-port",
        "--provider-port",
        "--redis-url",
        "--makers-process",
        "--shared-socket",
    }
)
_OWN_FLAGS = frozenset({"--no-makers"})
WATCH_EVERY_S = 0.1  # how often the first instance looks whether another one exited

log = logging.getLogger("rfqsim.instances")


class InstanceStartError(RuntimeError):
    """An instance exited or was not ready in time; the message has what it said."""


def others_argv(argv: list[str]) -> list[str]:
    """The first instance's `serve` arguments without the options each instance has its own
    of (`--port 8080`, `--port=8080` alike)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in _OWN_FLAGS:
            continue
        if name in _OWN_OPTIONS:
            skip = "=" not in arg
            continue
        kept.append(arg)
    return kept


@dataclass
class VenueInstances:
    """Starts, watches and stops the instances after the first. `argv`: the first one's
    `serve` arguments; `listen`: the socket it bound; `directory`: where their ready files go."""

    argv: list[str]
    listen: socket.socket
    count: int  # instances besides the first
    directory: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def ready_file(self, number: int) -> Path:
        return self.directory / f"instance-{number}.json"

    def start(self, redis_url: str, rpc_urls: dict[int, str]) -> None:
        fd = self.listen.fileno()
        os.set_inheritable(fd, True)
        for number in range(1, self.count + 1):
            self.ready_file(number).unlink(missing_ok=True)
            command = [
                sys.executable,
                "-m",
                "rfqsim.cli",
                "serve",
                *others_argv(self.argv),
                *(f"--rpc-url={chain}={url}" for chain, url in sorted(rpc_urls.items())),
                f"--redis-url={redis_url}",
                "--no-makers",
                "--port=0",
                "--provider-port=0",
                f"--shared-socket={fd}",
                f"--ready-file={self.ready_file(number)}",
            ]
            self.processes.append(
                subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,  # the first one's banner speaks for the venue
                    pass_fds=(fd,),
                    preexec_fn=die_with_parent,
                )
            )

    async def wait_ready(self, timeout_s: float) -> None:
        """Until each one has written its ready file; InstanceStartError when one exits first
        or the time runs out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            for number, process in enumerate(self.processes, start=1):
                if process.poll() is not None:
                    raise InstanceStartError(
                        f"instance {number} exited with {process.returncode} while starting "
                        "(what it said is above)"
                    )
            files = [self.ready_file(n) for n in range(1, len(self.processes) + 1)]
            if all(f.exists() for f in files):
                return
            if loop.time() > deadline:
                raise InstanceStartError(f"not every instance was ready within {timeout_s:.0f} s")
            await asyncio.sleep(0.05)

    async def watch(self, exited: Callable[[int, int], Awaitable[None]]) -> None:
        """Until cancelled (before `stop`): `exited(pid, returncode)` for each instance that
        exits, called before its process is reaped (so, once its pid is gone, whatever
        `exited` did is done)."""
        told: set[int] = set()
        while True:
            for process in self.processes:
                if process.pid in told or process.returncode is not None:
                    continue
                # WNOHANG: never waits; WNOWAIT: not reaped yet
                looked = os.WEXITED | os.WNOHANG | os.WNOWAIT
                ended = os.waitid(os.P_PID, process.pid, looked)  # noqa: ASYNC222
                if ended is None:
                    continue
                told.add(process.pid)
                try:
                    await exited(process.pid, ended.si_status)
                except Exception:  # its lease ends anyway: the venue lists it gone then
                    log.exception("instance (pid %d) exited; telling the venue failed", process.pid)
                finally:
                    process.poll()  # reaped now
            await asyncio.sleep(WATCH_EVERY_S)

    async def stop(self, timeout_s: float) -> None:
        """SIGTERM to each, then wait for all (SIGKILL for one still there at `timeout_s`)."""
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        await asyncio.gather(*(asyncio.to_thread(_reap, p, timeout_s) for p in self.processes))


def _reap(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
