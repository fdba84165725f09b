"""The process's stop, as the wiring sees it: `rfqsim serve` waits on it (a signal sets it), and a
part of the runtime can ask for it (a chain rfqsim started died and the policy is `stop`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from aiohttp import web

log = logging.getLogger("rfqsim")


@dataclass
class Shutdown:
    requested: asyncio.Event = field(default_factory=asyncio.Event)  # set: stop now
    exit_code: int = 0  # the process's exit status once stopped
    reason: str | None = None  # why, when it was not a signal

    def request(self, exit_code: int, reason: str) -> None:
        """Ask `rfqsim serve` to stop; the first request's status and reason win."""
        if not self.requested.is_set():
            self.exit_code = exit_code
            self.reason = reason
            log.error("stopping: %s", reason)
            self.requested.set()


class ChainRestarts(Protocol):
    """What the other parts of the runtime need of the chain supervisor (runtime/chains.py):
    to be told, with the chain id, once a restarted chain is deployed again."""

    restart_listeners: list[Callable[[int], Awaitable[None]]]


SHUTDOWN: web.AppKey[Shutdown] = web.AppKey("shutdown")  # made by the app factory
# While the chains run: watches them, and tells restart listeners (indexers, the fleet).
CHAIN_SUPERVISOR: web.AppKey[ChainRestarts] = web.AppKey("chain_supervisor")
