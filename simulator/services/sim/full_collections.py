"""When the simulator runs a full garbage collection (`collector.full_collections`).

Under load the heap holds every live quote with its slot, reservation, hold and timeline: at
100/s about 12,000 of them and 300,000 objects the collector tracks. CPython walks all of them in
a full (generation-2) collection, which it starts by itself once enough objects have survived
the young collections; on this heap that walk took 270-630 ms of CPU (docs/performance.md,
"Hold a day"), one pause that stops every request, and it found nothing to free: the firm path's
records are freed by reference counting, young cycles (requests, tasks, exceptions) by the young
collections, which still run as the interpreter schedules them.

So with `when_idle` (the default) the interpreter's own full collections are off and this
schedule decides instead: a full collection once the simulator has had no request for
`idle_s` (after some were served since the last one), or when the process has grown by
`memory_growth_mb` since the last one (the safety valve for cycles a long, never-idle run
might leave behind). `interpreter` keeps CPython's schedule. Pure decisions: the runtime reads
the gate, the memory and the time and runs the collection (runtime/full_collections.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FullCollectionReason = Literal["idle", "memory"]


@dataclass(frozen=True)
class Activity:
    """What the runtime reads each check: requests that entered the gate so far (a running
    count), requests inside now, the process's resident memory, the process's own time."""

    entered: int
    inside: int
    rss_mb: float
    now: float


class FullCollectionSchedule:
    def __init__(self, *, idle_s: float, memory_growth_mb: float, start: Activity) -> None:
        self.idle_s = idle_s
        self.memory_growth_mb = memory_growth_mb
        self._entered = start.entered  # the count at the last check
        self._quiet_since: float | None = start.now if start.inside == 0 else None
        self._served_since_last = False  # requests ran since the last full collection
        self._rss_after_last = start.rss_mb
        self.runs: dict[FullCollectionReason, int] = {"idle": 0, "memory": 0}

    def due(self, seen: Activity) -> FullCollectionReason | None:
        """Whether a full collection is due now, and why."""
        if seen.entered != self._entered:
            self._entered = seen.entered
            self._served_since_last = True
            self._quiet_since = None
        if seen.inside > 0:
            self._quiet_since = None
        elif self._quiet_since is None:
            self._quiet_since = seen.now
        if seen.rss_mb >= self._rss_after_last + self.memory_growth_mb:
            return "memory"
        quiet = self._quiet_since is not None and seen.now - self._quiet_since >= self.idle_s
        if quiet and self._served_since_last:
            return "idle"
        return None

    def collected(self, reason: FullCollectionReason, rss_mb: float) -> None:
        """A full collection ran; `rss_mb` is the memory after it."""
        self.runs[reason] += 1
        self._served_since_last = False
        self._rss_after_last = rss_mb


__all__ = ["Activity", "FullCollectionReason", "FullCollectionSchedule"]
