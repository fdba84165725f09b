"""The maker fleet's process forked from `rfqsim serve` itself, before its event loop starts.

`python -m makers.child` spends most of its start-up importing what `rfqsim serve` has already
imported (eth_account, the ABI codecs, pydantic models). A fork made before the event loop, the
chains and the listening socket exist shares those modules with the simulator instead: measured
on a quiet machine, the fleet process's CPU to ready fell from 0.81 to 0.13 s and `serve`'s time
to ready from 2.3 to 1.8 s (docs/decisions.md F24). The child is the
same program (makers/child.py `main`) on the same control channel: requests on its stdin,
replies on its stdout, logs on the simulator's stderr, in a session of its own, ended by
PR_SET_PDEATHSIG when the simulator is killed.

`ForkedProcess` gives FleetProcess (fleet_process.py) what it uses of an asyncio subprocess:
`pid`, `stdin`, `stdout`, `wait()` and `kill()`; its exit is seen through a pidfd, so no child
watcher and no other waitpid can take it. Only the first fleet process is forked: one started
again after its death is a plain `python -m makers.child` (FleetProcess.spawn).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
import signal
import sys
import traceback
from dataclasses import dataclass

from rfqkit.anvil import die_with_parent

LINE_LIMIT = 1 << 24  # bytes of one reply line (a status of many makers)
PROCESS_NAME = b"makers.child"  # its name in ps and psutil (its command line is ours)
_PR_SET_NAME = 15


@dataclass(frozen=True)
class ForkedChild:
    """A forked fleet process before the event loop: its pid and our ends of its two pipes."""

    pid: int
    to_child: int  # we write requests here (its stdin)
    from_child: int  # we read replies here (its stdout)


def can_fork() -> bool:
    """Whether this system can fork the child and watch it: Linux with pidfds (5.3 or later)."""
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


def fork_fleet_child() -> ForkedChild | None:
    """Fork the fleet's process now (call it before any event loop, thread or socket exists);
    None where the system cannot (the simulator then spawns `python -m makers.child`)."""
    if not can_fork():
        return None
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child, which never returns
        _run_child(stdin=to_child_r, stdout=from_child_w, ours=(to_child_w, from_child_r))
    os.close(to_child_r)
    os.close(from_child_w)
    return ForkedChild(pid=pid, to_child=to_child_w, from_child=from_child_r)


def _run_child(stdin: int, stdout: int, ours: tuple[int, int]) -> None:  # pragma: no cover
    """The child's whole life: what `python -m makers.child` does, then exit without running
    anything of the parent's (no atexit handler, no finally block of the simulator)."""
    code = 1
    try:
        os.setsid()  # a Ctrl-C in the terminal reaches the simulator only
        die_with_parent()
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_NAME, PROCESS_NAME)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        for fd in (stdin, stdout, *ours):
            os.close(fd)
        from makers.child import main

        gc.freeze()  # what we inherited stays shared: the collector need not walk (and copy) it
        code = asyncio.run(main())
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


class ForkedProcess:
    """A forked child on the running loop, shaped as FleetProcess uses a subprocess."""

    def __init__(
        self,
        child: ForkedChild,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        pidfd: int,
    ) -> None:
        self.pid = child.pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._pidfd = pidfd
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = loop.create_future()
        loop.add_reader(pidfd, self._reap)

    @classmethod
    async def connect(cls, child: ForkedChild) -> ForkedProcess:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(child.from_child, "rb", 0)
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(child.to_child, "wb", 0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return cls(child, writer, reader, os.pidfd_open(child.pid))

    def _reap(self) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._pidfd)
        try:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # reaped elsewhere: its status is lost, not its exit
            self.returncode = -1
        os.close(self._pidfd)  # after the wait: until then no other process can take its pid
        self._exited.set_result(self.returncode)

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        if self.returncode is None:
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
