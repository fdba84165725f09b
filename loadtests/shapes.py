"""Load shapes over the run time, chosen with ``--shape`` (steady, ramp, spike).

:func:`plan` is the shape as a pure function; ``loadtests.users.ProfileShape`` (which every
profile imports, so locust always runs through it) asks it every second with the common options
(``--users``, ``--spawn-rate``, ``--run-time``), and the test ends when the run time is over, so a
shape can never outlive the bound. No locust import here: importing locust monkey-patches the
process with gevent."""

from __future__ import annotations

import math

RAMP_STEPS = 4
SPIKE_BASE_SHARE = 0.2  # users outside the spike, as a share of --users
SPIKE_WINDOW = (0.4, 0.6)  # where the spike sits, as shares of the run time


def plan(
    shape: str, elapsed_s: float, users: int, spawn_rate: float, run_time_s: float
) -> tuple[int, float] | None:
    """(users, spawn rate) at ``elapsed_s`` into the run; None once the run time is over.

    - steady: ``users`` at ``spawn_rate`` for the whole run;
    - ramp: four equal steps, 25 %, 50 %, 75 %, 100 % of ``users``;
    - spike: 20 % of ``users`` (at least one), all of them between 40 % and 60 % of the run
      time (spawned within a second), then back down.
    """
    if elapsed_s >= run_time_s:
        return None
    if shape == "steady":
        return users, spawn_rate
    if shape == "ramp":
        steps = min(RAMP_STEPS, users)
        step = min(int(elapsed_s / run_time_s * steps), steps - 1)
        return max(1, math.ceil(users * (step + 1) / steps)), spawn_rate
    if shape == "spike":
        base = max(1, round(users * SPIKE_BASE_SHARE))
        start, end = SPIKE_WINDOW
        if start * run_time_s <= elapsed_s < end * run_time_s:
            return users, max(spawn_rate, float(users))
        return base, max(spawn_rate, float(users))
    raise ValueError(f"unknown shape {shape!r}")
