"""The garbage collector's pauses in this process, recorded from ``gc.callbacks``.

A full collection stops every request at once: a pause longer than a maker's reply budget makes
an on-time reply late, so a load report has to be able to tell the simulator's pauses from the
maker's latency (GET /_sim/runtime, the soak bench). The callback runs at the start and stop of
every collection (young ones hundreds of times a second under load), so it only reads a
timer and updates a few numbers in place; a new record is made once a second at most.

A full collection (generation 2, the one that lasts tens of milliseconds) is also timed in the
thread's CPU time: on a shared machine a collection that waited for a core is long in wall time
only. Young collections are not: reading a CPU clock is a system call (about 4 µs on the
project's machine, against 0.07 µs for the wall timer), and they are short and many.

Times are the process's own (a monotonic timer; each second labelled with wall-clock time), not
the simulator clock: a pause is a fact about the process, and moving the clock must not move it
(docs/decisions.md S14).
"""

from __future__ import annotations

import gc
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

# As gc.callbacks holds them.
GcCallback = Callable[[Literal["start", "stop"], dict[str, int]], object]

GENERATIONS = 3  # CPython's 0, 1 and 2
FULL = 2  # the generation whose collection walks the whole heap
SECONDS_KEPT = 600  # ten minutes of per-second figures: a reader polling each minute has slack


@dataclass
class PauseTotals:
    """Collections and their pauses, one generation or one second."""

    collections: int = 0
    total_ms: float = 0.0
    longest_ms: float = 0.0
    # The most CPU one full collection used (not always the longest's); None: no full one.
    longest_cpu_ms: float | None = None

    def add(self, pause_ms: float, cpu_ms: float | None) -> None:
        self.collections += 1
        self.total_ms += pause_ms
        if pause_ms > self.longest_ms:
            self.longest_ms = pause_ms
        if cpu_ms is not None and (self.longest_cpu_ms is None or cpu_ms > self.longest_cpu_ms):
            self.longest_cpu_ms = cpu_ms


@dataclass
class SecondPauses:
    at: int  # wall-clock Unix second the collections ended in
    totals: PauseTotals


class GcPauseRecorder:
    def __init__(
        self,
        *,
        timer: Callable[[], float] = time.perf_counter,
        cpu: Callable[[], float] = time.thread_time,
        wall: Callable[[], float] = time.time,
        seconds_kept: int = SECONDS_KEPT,
    ) -> None:
        self._timer = timer
        self._cpu = cpu
        # Wall time from the monotonic timer by one offset taken now: one timer read per event.
        self._epoch = wall() - timer()
        self.since = wall()
        self.generations = [PauseTotals() for _ in range(GENERATIONS)]
        self._seconds: deque[SecondPauses] = deque(maxlen=seconds_kept)
        self._started: float | None = None
        self._started_cpu = 0.0
        self._installed_in: list[GcCallback] | None = None

    def callback(self, phase: str, info: dict[str, int]) -> None:
        now = self._timer()
        full = info["generation"] == FULL
        if phase == "start":
            self._started = now
            if full:
                self._started_cpu = self._cpu()
            return
        started, self._started = self._started, None
        if started is None:  # installed while a collection ran: its start was not seen
            return
        pause_ms = (now - started) * 1000
        cpu_ms = (self._cpu() - self._started_cpu) * 1000 if full else None
        self.generations[info["generation"]].add(pause_ms, cpu_ms)
        second = int(self._epoch + now)
        if not self._seconds or self._seconds[-1].at != second:
            self._seconds.append(SecondPauses(second, PauseTotals()))
        self._seconds[-1].totals.add(pause_ms, cpu_ms)

    def seconds(self, since: float | None = None) -> list[SecondPauses]:
        """The kept seconds with a collection, oldest first; with ``since`` (Unix seconds) only
        those from the second that holds it on."""
        floor = int(since) if since is not None else None
        return [s for s in self._seconds if floor is None or s.at >= floor]

    @property
    def seconds_kept(self) -> int:
        return self._seconds.maxlen or 0

    @property
    def longest_ms(self) -> float:
        return max(g.longest_ms for g in self.generations)

    def install(self, callbacks: list[GcCallback] | None = None) -> None:
        """Start recording (``callbacks``: ``gc.callbacks`` unless a test gives its own)."""
        target = gc.callbacks if callbacks is None else callbacks
        target.append(self.callback)
        self._installed_in = target

    def uninstall(self) -> None:
        if self._installed_in is not None and self.callback in self._installed_in:
            self._installed_in.remove(self.callback)
        self._installed_in = None


__all__ = ["GcCallback", "GcPauseRecorder", "PauseTotals", "SecondPauses"]
