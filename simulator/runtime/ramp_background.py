"""The ramp's background work on the simulator clock: the five-minute sweep,
the expiry tick and, with `--smtp`, the email worker. Runs after the provider is attached; every
task is cancelled and awaited on shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.tasks import cancel_and_wait, step_forever
from simulator.api.http.appkeys import CLOCK, RAMP
from simulator.clock import Clock
from simulator.services.ramp.sweep import RampSweep

log = logging.getLogger("rfqsim.ramp.background")

EXPIRY_TICK_S = 0.25  # new transfers appear between ticks; never sleep longer than this


async def sweep_forever(clock: Clock, sweep: RampSweep) -> None:
    """Every `interval_s` of simulator time (an advance wakes it at once)."""
    next_at = clock.time() + sweep.interval_s
    while True:
        await clock.sleep_until(next_at)
        try:
            await sweep.sweep()
        except Exception:
            log.exception("ramp sweep failed; next one on schedule")
        next_at = clock.time() + sweep.interval_s


async def ramp_background_context(app: web.Application) -> AsyncIterator[None]:
    ramp = app[RAMP]
    clock = app[CLOCK]
    tasks = [
        asyncio.create_task(sweep_forever(clock, ramp.sweep), name="ramp-sweep"),
        asyncio.create_task(
            step_forever(
                clock,
                ramp.sweep.expire_due,
                ramp.sweep.next_expiry,
                max_sleep_s=EXPIRY_TICK_S,
                log=log,
                what="ramp expiry tick",
            ),
            name="ramp-expiry",
        ),
    ]
    if ramp.emails.smtp is not None:
        tasks.append(asyncio.create_task(ramp.emails.deliver_forever(), name="ramp-smtp"))
    try:
        yield
    finally:
        if ramp.emails.smtp is not None:
            await ramp.emails.drain(timeout_s=2.0)
        await cancel_and_wait(tasks)
