"""The simulator's own maker fleet in a child process (`makers_process: own`): the process
(`python -m makers.child`), the control channel to it (JSON lines over its stdin and stdout,
makers/control.py) and the SimulatedFleet port over that channel.

The child never outlives the simulator: it ends when its stdin closes (our stop, or our death),
on SIGTERM, and by PR_SET_PDEATHSIG when we are killed. It runs in a session of its own, so a
Ctrl-C in the terminal reaches the simulator only, which then stops it in order. A child that
exits on its own is logged; its pending and later requests fail at once (502
maker_unreachable), they never wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
from collections.abc import Callable, Mapping
from typing import Any

from makers.control import FAILED, ControlError, decode, encode
from rfqkit.anvil import die_with_parent
from simulator.adapters.rfq.fleet import fleet_error, member_from_json
from simulator.adapters.rfq.forked_child import LINE_LIMIT, ForkedChild, ForkedProcess
from simulator.errors import FleetProcessUnreachable
from simulator.services.rfq.ports import FleetMemberStatus

log = logging.getLogger("rfqsim.fleet")

CHILD_MODULE = "makers.child"
CALL_TIMEOUT_S = 10.0  # a status read, a chain restart
RECONFIGURE_TIMEOUT_S = 45.0  # a maker told to go online tries to reconnect for up to 30 s
START_TIMEOUT_S = 90.0  # every maker connected and ready (MakerFleet.start waits up to 30 s)
STOP_TIMEOUT_S = 10.0  # the fleet closed, then the process gone


class FleetProcess:
    """One child process and its channel. `spawn()` starts it (`adopt()` takes one forked
    before the event loop, forked_child.py); `call()` sends one request and returns its result
    (ControlError when the fleet refused it, FleetProcessUnreachable when the process could not
    answer); `close()` stops the fleet and ends the process."""

    def __init__(self, process: asyncio.subprocess.Process | ForkedProcess) -> None:
        self._process = process
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}  # request id -> its reply
        self._closing = False
        self.exit_code: int | None = None  # once the process has exited
        self._reader = asyncio.create_task(self._read_replies(), name="fleet-process-reader")

    @classmethod
    async def spawn(cls, module: str = CHILD_MODULE) -> FleetProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            module,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # its log lines go where ours go
            preexec_fn=die_with_parent,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        log.info("maker fleet process started (pid %d)", process.pid)
        return cls(process)

    @classmethod
    async def adopt(cls, child: ForkedChild) -> FleetProcess:
        process = await ForkedProcess.connect(child)
        log.info("maker fleet process started (pid %d, forked at start-up)", process.pid)
        return cls(process)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def alive(self) -> bool:
        return self.exit_code is None and not self._reader.done()

    async def call(
        self, op: str, args: Mapping[str, Any] | None = None, *, timeout_s: float = CALL_TIMEOUT_S
    ) -> Any:
        if not self.alive:
            raise FleetProcessUnreachable(self._gone_message())
        stdin = self._process.stdin
        assert stdin is not None
        request_id = next(self._ids)
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = reply
        try:
            stdin.write(encode({"id": request_id, "op": op, "args": dict(args or {})}))
            await stdin.drain()
            async with asyncio.timeout(timeout_s):
                return await reply
        except (ConnectionError, BrokenPipeError) as exc:
            raise FleetProcessUnreachable(f"{self._gone_message()} ({exc})") from exc
        except TimeoutError as exc:
            raise FleetProcessUnreachable(
                f"the maker fleet process did not answer {op} within {timeout_s:g}s"
            ) from exc
        finally:
            self._pending.pop(request_id, None)

    async def exited(self, within_s: float) -> bool:
        """Whether the process is gone, once it has had `within_s` to be seen gone (a write to a
        child that just died fails before its end of output is read)."""
        await asyncio.wait({self._reader}, timeout=within_s)
        return not self.alive

    async def chain_restarted(self, chain_id: int) -> None:
        """A chain restart listener (runtime/chains.py): the child's makers approve and read
        their balances there again. A child that cannot be told is logged, not raised: the
        other listeners still run."""
        try:
            await self.call("chain_restarted", {"chain_id": chain_id})
        except (FleetProcessUnreachable, ControlError) as exc:
            log.error("could not tell the maker fleet that chain %d restarted: %s", chain_id, exc)

    async def close(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Stop the fleet, close its stdin (the child then exits) and wait for the exit; a child
        still there after `timeout_s` is killed. Idempotent."""
        self._closing = True
        if self.alive:
            with contextlib.suppress(FleetProcessUnreachable, ControlError):
                await self.call("stop", timeout_s=timeout_s)
        stdin = self._process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            async with asyncio.timeout(timeout_s):
                await self._process.wait()
        except TimeoutError:
            log.error("maker fleet process %d did not exit; killing it", self._process.pid)
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.wait()
        await self._reader

    async def _read_replies(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                try:
                    message = decode(line)
                except ValueError:
                    log.error("maker fleet process wrote a line that is no reply: %r", line[:200])
                    continue
                reply = self._pending.get(message.get("id", -1))
                if reply is None or reply.done():
                    continue  # its caller gave up waiting
                if "error" in message:
                    reply.set_exception(ControlError.from_json(message["error"]))
                else:
                    reply.set_result(message.get("result"))
        except (ValueError, ConnectionError) as exc:  # a line over LINE_LIMIT, a broken pipe
            log.error("maker fleet process channel broke: %s; ending the process", exc)
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()  # a child we cannot read must not linger half-connected
        finally:
            self.exit_code = await self._process.wait()
            if not self._closing:
                log.error("%s; /_sim/makers sees no fleet until a reset starts one", self._gone())
            for reply in self._pending.values():
                if not reply.done():
                    reply.set_exception(FleetProcessUnreachable(self._gone_message()))

    def _gone(self) -> str:
        return f"maker fleet process {self._process.pid} exited with status {self.exit_code}"

    def _gone_message(self) -> str:
        return self._gone() if self.exit_code is not None else "the maker fleet process is gone"


class ProcessFleetControl:
    """SimulatedFleet over a fleet in its own process. `current` returns the process while its
    fleet runs: None before the start, while a reset restarts it, and with the fleet disabled."""

    def __init__(self, current: Callable[[], FleetProcess | None]) -> None:
        self._current = current

    async def members(self) -> list[FleetMemberStatus]:
        process = self._current()
        if process is None or not process.alive:
            return []  # a child that died was logged when it did
        try:
            members = await process.call("members")
        except FleetProcessUnreachable:
            if await process.exited(within_s=1.0):
                return []  # it died just now (logged as it did)
            raise
        except ControlError as exc:
            raise FleetProcessUnreachable(f"maker fleet status: {exc.message}") from exc
        if not isinstance(members, list):
            raise FleetProcessUnreachable(f"maker fleet status: unexpected reply {members!r}")
        return [member_from_json(member) for member in members]

    async def reconfigure(self, name: str, changes: Mapping[str, Any]) -> None:
        process = self._current()
        if process is None:
            raise fleet_error(name, ControlError("not_found", f"no fleet running for {name}"))
        try:
            await process.call(
                "reconfigure",
                {"name": name, "changes": dict(changes)},
                timeout_s=RECONFIGURE_TIMEOUT_S,
            )
        except ControlError as exc:
            raise fleet_error(name, exc) from exc
        except FleetProcessUnreachable as exc:
            raise fleet_error(name, ControlError(FAILED, exc.message)) from exc
