"""The request gate: how a reset or restore never runs under a half-done request.

Every gated request enters the gate (api/http/state_gate.py). A state change closes it: new
requests wait for it to open again (and then run on the new state), requests already inside get
`drain_s` to finish; those still running then are cancelled and answered with a transient 503
(`venue_unavailable`, details.reason `state_reset`, Retry-After), so none of them writes into
the restored state. Once the new state is in place the state change restarts the simulated
fleet with the gate still closed, admitting the fleet's own requests only (`admitting_own`):
its first round reads and writes the new state through the API, and the clients waiting meet a
venue whose makers are back. Pure asyncio: no aiohttp here."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any


class StateChangeInterrupted(Exception):
    """A request was cancelled because the state was reset or restored under it."""


class RequestGate:
    def __init__(self, *, drain_s: float = 2.0, wait_s: float = 30.0) -> None:
        self.drain_s = drain_s  # how long requests inside may run on after a state change starts
        self.wait_s = wait_s  # how long a new request waits for the gate before it gives up
        self._open = asyncio.Event()  # set while no state change is under way
        self._open.set()
        self._inside: set[asyncio.Task[Any]] = set()  # requests running now
        self._drained = asyncio.Event()  # set whenever nobody is inside
        self._drained.set()
        self._interrupted: set[asyncio.Task[Any]] = set()  # cancelled by a state change
        self.admitting_own = False  # closed, but the fleet's own requests pass (admitting_own)
        self.entered = 0  # requests tracked so far: whether any ran between two looks

    @property
    def inside(self) -> int:
        return len(self._inside)

    async def enter(self, *, own: bool = False) -> None:
        """Wait until no state change is under way (bounded: then the request fails). `own`: a
        request of the simulator's own fleet, which passes while `admitting_own` holds."""
        if not self._open.is_set() and not (own and self.admitting_own):
            try:
                async with asyncio.timeout(self.wait_s):
                    await self._open.wait()
            except TimeoutError:
                raise StateChangeInterrupted from None

    def track(self, task: asyncio.Task[Any]) -> None:
        self.entered += 1
        self._inside.add(task)
        self._drained.clear()

    def untrack(self, task: asyncio.Task[Any]) -> bool:
        """True when the task ended because a state change cancelled it."""
        self._inside.discard(task)
        if not self._inside:
            self._drained.set()
        interrupted = task in self._interrupted
        self._interrupted.discard(task)
        return interrupted

    @asynccontextmanager
    async def closed(self) -> AsyncIterator[int]:
        """Close the gate, let the requests inside finish (cancel the slow ones), run the body,
        open again. Yields how many requests had to be cancelled."""
        self._open.clear()
        try:
            cancelled = 0
            try:
                async with asyncio.timeout(self.drain_s):
                    await self._drained.wait()
            except TimeoutError:
                late = set(self._inside)
                cancelled = len(late)
                self._interrupted |= late
                for task in late:
                    task.cancel()
                await asyncio.wait(late)
            yield cancelled
        finally:
            self._open.set()

    @contextmanager
    def own_requests_admitted(self) -> Iterator[None]:
        """Inside `closed()`, once the new state is in place: the fleet's own requests enter."""
        self.admitting_own = True
        try:
            yield
        finally:
            self.admitting_own = False
