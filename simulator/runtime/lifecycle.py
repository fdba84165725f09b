"""The process's stop, as the wiring sees it: `rfqsim serve` waits on it (a signal sets it), and a
part of the runtime can ask for it (a chain rfqsim started died and the policy is `stop`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from aiohttp import web

log = logging.getLogger("rfqsim")


class StopSteps:
    """The steps of a stop as each begins, timed: `rfqsim serve` logs what each took when the
    stop ends, and the watchdog says the same when it passes its deadline."""

    def __init__(self) -> None:
        self._began: list[tuple[str, float]] = []  # (step, time.monotonic() as it began)

    def at(self, step: str) -> None:
        self._began.append((step, time.monotonic()))

    @property
    def current(self) -> str:
        return self._began[-1][0] if self._began else "starting"

    def timings(self) -> str:
        """Each step so far with its seconds, the last one's until now ("none" before the
        first: a stop asked for while the process was still starting)."""
        if not self._began:
            return "none"
        ends = [began for _, began in self._began[1:]] + [time.monotonic()]
        return ", ".join(
            f"{step} {end - began:.2f} s"
            for (step, began), end in zip(self._began, ends, strict=True)
        )


@dataclass
class Shutdown:
    requested: asyncio.Event = field(default_factory=asyncio.Event)  # set: stop now
    exit_code: int = 0  # the process's exit status once stopped
    reason: str | None = None  # why, when it was not a signal
    steps: StopSteps = field(default_factory=StopSteps)  # the stop's, once it begins

    def request(self, exit_code: int, reason: str) -> None:
        """Ask `rfqsim serve` to stop; the first request's status and reason win."""
        if not self.requested.is_set():
            self.exit_code = exit_code
            self.reason = reason
            log.error("stopping: %s", reason)
            self.requested.set()


CleanupContext = Callable[[web.Application], AsyncIterator[None]]


def stop_step(context: CleanupContext) -> CleanupContext:
    """The same cleanup context, its cleanup a named step of the stop (`Shutdown.steps`):
    `closing chains` for `chains_context`."""
    name = context.__name__.removesuffix("_context").strip("_").replace("_", " ")

    async def timed(app: web.Application) -> AsyncIterator[None]:
        inner = context(app)
        await anext(inner)
        yield
        app[SHUTDOWN].steps.at(f"closing {name}")
        await anext(inner, None)

    timed.__name__ = context.__name__
    return timed


class ChainRestarts(Protocol):
    """What the other parts of the runtime need of the chain supervisor (runtime/chains.py):
    to be told, with the chain id, once a restarted chain is deployed again."""

    restart_listeners: list[Callable[[int], Awaitable[None]]]


SHUTDOWN: web.AppKey[Shutdown] = web.AppKey("shutdown")  # made by the app factory
# While the chains run: watches them, and tells restart listeners (indexers, the fleet).
CHAIN_SUPERVISOR: web.AppKey[ChainRestarts] = web.AppKey("chain_supervisor")
