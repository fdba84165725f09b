"""What the health endpoints report: the state of each dependency the simulator serves through
(one per chain, the fill index of each chain, the ramp provider), as the parts that use them last
saw it. Background monitors and the indexers report; the health handler reads. No I/O here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

DependencyStatus = Literal["up", "down"]


@dataclass
class DependencyState:
    status: DependencyStatus
    detail: str | None  # why it is down (or a note while up), never a secret
    since: float  # service time of the last change of status


class DependencyHealth:
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now  # the service clock's time()
        self._states: dict[str, DependencyState] = {}  # by dependency name (chain:97, index:97)

    def report(self, name: str, up: bool, detail: str | None = None) -> bool:
        """Record what was just seen; True when the status changed (callers log changes)."""
        status: DependencyStatus = "up" if up else "down"
        current = self._states.get(name)
        if current is not None and current.status == status:
            current.detail = detail
            return False
        self._states[name] = DependencyState(status=status, detail=detail, since=self._now())
        return True

    def forget(self, name: str) -> None:
        self._states.pop(name, None)

    def get(self, name: str) -> DependencyState | None:
        return self._states.get(name)

    def snapshot(self) -> dict[str, DependencyState]:
        return dict(sorted(self._states.items()))

    @property
    def overall(self) -> Literal["ok", "degraded"]:
        """`ok` while every dependency is up; `degraded` when any is down (the process serves
        what does not depend on it)."""
        return "ok" if all(s.status == "up" for s in self._states.values()) else "degraded"
