"""The process's stop, as the wiring sees it: `rfqsim serve` waits on it (a signal sets it), and a
part of the runtime can ask for it (a chain rfqsim started died and the policy is `stop`)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from simulator.runtime.chains import ChainSupervisor

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


SHUTDOWN: web.AppKey[Shutdown] = web.AppKey("shutdown")  # made by the app factory
# While the chains run: watches them, and tells restart listeners (indexers, the fleet).
CHAIN_SUPERVISOR: web.AppKey[ChainSupervisor] = web.AppKey("chain_supervisor")
