"""The sandbox's view of time: the simulator's clock when in-process (one clock for everything),
else wall time plus an offset that only grows (POST /sandbox/clock/advance)."""

from __future__ import annotations

import time
from collections.abc import Callable


class SandboxClock:
    def __init__(self, time_source: Callable[[], float] | None = None) -> None:
        self._source = time_source  # the simulator's Clock.time when shared, else None
        self._offset = 0.0  # seconds added to wall time by advance() (standalone only)

    @property
    def shared(self) -> bool:
        return self._source is not None

    @property
    def offset_seconds(self) -> float:
        return self._offset

    def time(self) -> float:
        if self._source is not None:
            return self._source()
        return time.time() + self._offset

    def advance(self, seconds: float) -> float:
        """Standalone only: a shared clock is moved by its owner, never from here."""
        if self._source is not None:
            raise RuntimeError("the sandbox shares the simulator's clock; advance it there")
        if seconds <= 0:
            raise ValueError("the clock only moves forward")
        self._offset += seconds
        return self.time()
