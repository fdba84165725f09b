"""The one clock of the simulator.

Real time plus an offset that only grows: `/_sim/clock/advance` moves the offset forward, and the
chain adapters move every Anvil's block time by the same amount, so on-chain deadlines agree with
the service's view of time. Timers that must follow simulated time wait on `sleep_until`, which
wakes early when the clock is advanced.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

AdvanceListener = Callable[[float], Awaitable[None]]


class Clock:
    def __init__(self) -> None:
        self._offset = 0.0  # seconds added to real time by advance()
        self._listeners: list[AdvanceListener] = []  # told of each advance (chains follow it)
        self._advanced = asyncio.Event()  # set and cleared on each advance to wake sleepers
        self._advance_lock = asyncio.Lock()  # one advance at a time, so listeners see them in order

    @property
    def offset_seconds(self) -> float:
        return self._offset

    def time(self) -> float:
        """Unix seconds, simulated."""
        return time.time() + self._offset

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), tz=UTC)

    def wall_time(self) -> float:
        """Unix seconds of the real clock, whatever advance() did. Only for what a party outside
        the simulation checks against its own clock: a webhook signature's `t` (docs/decisions.md
        W3). Everything the simulated service records uses time()."""
        return time.time()

    def millis(self) -> int:
        return int(self.time() * 1000)

    def monotonic(self) -> float:
        """For measuring durations (reply budgets); unaffected by advance()."""
        return time.monotonic()

    def add_listener(self, listener: AdvanceListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: AdvanceListener) -> None:
        self._listeners.remove(listener)

    async def advance(self, seconds: float) -> datetime:
        """Move simulated time forward; returns the new now once every listener has caught up."""
        if seconds <= 0:
            raise ValueError("the clock only moves forward")
        async with self._advance_lock:
            self._offset += seconds
            for listener in list(self._listeners):
                await listener(seconds)
            event, self._advanced = self._advanced, asyncio.Event()
            event.set()
        return self.now()

    def restore_offset(self, seconds: float) -> None:
        """Put the offset back to what it was (reset, snapshot restore): the one way it moves
        backwards. Sleepers wake and measure again against the restored time; the chains are
        put back by the state control itself (reverted with the rest of their state)."""
        self._offset = seconds
        event, self._advanced = self._advanced, asyncio.Event()
        event.set()

    def catch_up(self, offset: float) -> None:
        """Another instance of the venue advanced the clock (and the chains) to `offset`: take
        it, waking sleepers, unless this clock is already there. Listeners are not told: the
        chains moved with the instance that advanced."""
        if offset > self._offset:
            self._offset = offset
            event, self._advanced = self._advanced, asyncio.Event()
            event.set()

    async def sleep_until(self, unix_seconds: float) -> None:
        """Sleep until simulated time reaches `unix_seconds` (wakes early on advance)."""
        while (remaining := unix_seconds - self.time()) > 0:
            advanced = self._advanced
            try:
                async with asyncio.timeout(remaining):
                    await advanced.wait()
            except TimeoutError:
                continue

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(self.time() + seconds)


__all__ = ["AdvanceListener", "Clock", "timedelta"]
