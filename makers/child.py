"""A simulator's own maker fleet in a process of its own: `python -m makers.child`.

`rfqsim serve` with `makers_process: own` starts this and drives it over the control channel of
makers/control.py: requests on stdin, replies on stdout, logs on stderr (the simulator's). It
starts with no fleet; `start` brings one up (credentials and keys come with the request, not
on the command line), `stop` closes it, and the process can start a fleet again (a reset). End
of stdin (the simulator closed it, or died) closes the fleet and ends the process; SIGTERM
does the same. SIGINT is ignored: a Ctrl-C in the simulator's terminal is the simulator's to
handle, and it stops this process in its own time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from makers.control import (
    FAILED,
    ControlError,
    decode,
    encode,
    fleet_from_start,
    member_status,
    reconfigure_maker,
)
from makers.fleet import MakerFleet
from rfqkit.redaction import install_redaction

log = logging.getLogger("rfqsim.fleet.child")

DRAIN_S = 5.0  # at end of input, how long requests under way may still take
Handler = Callable[[dict[str, Any]], Awaitable[Any]]


class FleetChild:
    """The operations of the control channel over one (re)startable fleet."""

    def __init__(self) -> None:
        self.fleet: MakerFleet | None = None
        self._lifecycle = asyncio.Lock()  # start and stop one at a time: guards self.fleet

    def handlers(self) -> dict[str, Handler]:
        return {
            "start": self.start,
            "stop": self.stop,
            "members": self.members,
            "reconfigure": self.reconfigure,
            "chain_restarted": self.chain_restarted,
        }

    async def start(self, args: dict[str, Any]) -> dict[str, int]:
        """The fleet up: every maker online with its levels read by the server and its first
        resting orders placed. Answers the resting orders each maker placed, by name."""
        async with self._lifecycle:
            if self.fleet is not None:
                raise ControlError(FAILED, "the fleet is already running")
            fleet = fleet_from_start(args)
            placed = await fleet.start()  # all or nothing: a failure closes it
            self.fleet = fleet
            log.info("maker fleet online: %s", ", ".join(fleet.makers))
            return placed

    async def stop(self, args: dict[str, Any]) -> None:
        async with self._lifecycle:
            fleet, self.fleet = self.fleet, None
            if fleet is not None:
                await fleet.close()

    async def members(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        fleet = self.fleet
        return [] if fleet is None else [member_status(m) for m in fleet.makers.values()]

    async def reconfigure(self, args: dict[str, Any]) -> None:
        changes = args.get("changes")
        if not isinstance(changes, dict):
            raise ControlError(FAILED, "reconfigure needs changes as an object")
        await reconfigure_maker(self.fleet, str(args.get("name")), changes)

    async def chain_restarted(self, args: dict[str, Any]) -> None:
        chain_id = int(args["chain_id"])
        if self.fleet is not None:
            await self.fleet.chain_restarted(chain_id)
            log.info(
                "chain %d restarted: the makers approve and read balances there again", chain_id
            )


async def answer(handlers: dict[str, Handler], message: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request: its result, or the error it raised."""
    request_id = message.get("id")
    handler = handlers.get(str(message.get("op")))
    try:
        if handler is None:
            raise ControlError(FAILED, f"unknown op {message.get('op')!r}")
        args = message.get("args") or {}
        if not isinstance(args, dict):
            raise ControlError(FAILED, "args must be an object")
        return {"id": request_id, "result": await handler(args)}
    except ControlError as exc:
        return {"id": request_id, "error": exc.to_json()}
    except Exception as exc:  # one failed request must not end the channel
        log.exception("control request %s failed", message.get("op"))
        return {"id": request_id, "error": ControlError(FAILED, repr(exc)).to_json()}


async def serve_channel(
    child: FleetChild, reader: asyncio.StreamReader, write: Callable[[bytes], None]
) -> None:
    """Answer requests until end of input; each request runs as its own task."""
    handlers = child.handlers()
    tasks: set[asyncio.Task[None]] = set()

    async def run(message: dict[str, Any]) -> None:
        write(encode(await answer(handlers, message)))

    try:
        while line := await reader.readline():
            try:
                message = decode(line)
            except ValueError as exc:
                write(encode({"id": None, "error": ControlError(FAILED, str(exc)).to_json()}))
                continue
            task = asyncio.create_task(run(message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:  # end of input: requests under way get a moment to finish and answer
            await asyncio.wait(tasks, timeout=DRAIN_S)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await child.stop({})


async def main() -> int:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    install_redaction()  # no key or signature in any log line
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(sys.stdin.fileno(), "rb", 0)
    )
    out = sys.stdout.buffer

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    child = FleetChild()
    channel = asyncio.create_task(serve_channel(child, reader, write))
    loop.add_signal_handler(signal.SIGTERM, channel.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await channel
    return 0


if __name__ == "__main__":  # pragma: no cover - the process entry point
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise SystemExit(asyncio.run(main()))
