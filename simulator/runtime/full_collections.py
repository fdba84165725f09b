"""The simulator's schedule of full garbage collections (services/sim/full_collections.py says
why): while the app runs with `collector.full_collections: when_idle`, CPython's own full
collections are off (its generation-2 threshold is out of reach; young collections unchanged)
and a task checks every `CHECK_S` whether the schedule wants one. The thresholds the process had
are put back when the app stops, so an app built inside a test leaves the interpreter as it
found it."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import AsyncIterator

import psutil
from aiohttp import web

from rfqkit.tasks import cancel_and_wait
from simulator.api.http.appkeys import FULL_COLLECTIONS, SETTINGS, STATE
from simulator.services.sim.full_collections import Activity, FullCollectionSchedule

log = logging.getLogger("rfqsim.collector")

CHECK_S = 0.5  # how often the schedule is asked: a quarter of the default idle_s
# A generation-2 threshold no run reaches: CPython compares it with the young collections
# counted since the last full one (one per 10 generation-1 collections at the default).
NEVER = 2**31 - 1


def _rss_mb(process: psutil.Process) -> float:
    return float(process.memory_info().rss) / 1e6


async def full_collections_context(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS].collector
    if settings.full_collections != "when_idle":
        yield
        return
    gate = app[STATE].gate
    process = psutil.Process()

    def seen() -> Activity:
        return Activity(gate.entered, gate.inside, _rss_mb(process), time.monotonic())

    schedule = FullCollectionSchedule(
        idle_s=settings.idle_s, memory_growth_mb=settings.memory_growth_mb, start=seen()
    )
    app[FULL_COLLECTIONS] = schedule
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], NEVER)

    async def run() -> None:
        while True:
            await asyncio.sleep(CHECK_S)
            reason = schedule.due(seen())
            if reason is not None:
                found = gc.collect()
                schedule.collected(reason, _rss_mb(process))
                log.debug("full collection (%s): %d unreachable objects", reason, found)

    task = asyncio.create_task(run(), name="full-collections")
    try:
        yield
    finally:
        await cancel_and_wait([task])
        gc.set_threshold(*before)
