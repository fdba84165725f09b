"""A clock that moves one second a read, for the timeline tests and the timeline archive's."""

from __future__ import annotations


class Ticks:
    """A clock that moves `step` seconds at each reading."""

    def __init__(self, now: float = 100.0, step: float = 0.5) -> None:
        self.now = now
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now
