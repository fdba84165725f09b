"""What the machine and the simulator's process did during a run, measured on the master (the
target is on loopback, so its process is on this machine): how much of a core the simulator's
process used, the machine's load average against its cores, and whether the maker fleet ran in a
process of its own (a ``makers.child`` child of ``rfqsim serve``) or inside the simulator. The
simulator-added warning names these as its measured causes (:mod:`loadtests.sim_added`).

The simulator's process is the ``pid`` of ``/_sim/info``; when no process of that id running
``rfqsim`` is found here (a port forwarded from elsewhere), its figures are left out.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import psutil


def _simulator(pid: Any) -> psutil.Process | None:
    try:
        process = psutil.Process(int(pid))
        if any("rfqsim" in part for part in process.cmdline()):
            return process
    except (psutil.Error, TypeError, ValueError):
        pass
    return None


def _cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def is_fleet_process(process: psutil.Process) -> bool:
    """Whether ``process`` is a simulator's maker fleet process: forked by ``rfqsim serve`` (named
    ``makers.child``) or started as ``python -m makers.child``."""
    return process.name() == "makers.child" or "makers.child" in " ".join(process.cmdline())


def fleet_wiring(process: psutil.Process) -> str:
    """``own`` when the fleet runs in a child process of its own, else ``in``."""
    try:
        if any(is_fleet_process(child) for child in process.children()):
            return "own"
    except psutil.Error:
        return "unknown"
    return "in"


@dataclass
class RunWatch:
    """Started when the load starts, read when it stops."""

    process: psutil.Process | None
    cpu_at_start: float
    wall_at_start: float

    @classmethod
    def start(cls, info: dict[str, Any]) -> RunWatch:
        process = _simulator(info.get("pid"))
        cpu = _cpu_s(process) if process is not None else 0.0
        return cls(process, cpu, time.monotonic())

    def figures(self) -> dict[str, Any]:
        measured: dict[str, Any] = {
            "load_average_1m": round(os.getloadavg()[0], 2),
            "cores": psutil.cpu_count(logical=True),
        }
        if self.process is not None:
            try:
                wall = max(time.monotonic() - self.wall_at_start, 1e-6)
                share = (_cpu_s(self.process) - self.cpu_at_start) / wall
                measured["simulator_core_share"] = round(share, 3)
                measured["fleet"] = fleet_wiring(self.process)
            except psutil.Error:
                pass
        return measured
