"""The ramp's background work on the simulator clock (docs/ramp.md RA23): the five-minute sweep,
the expiry tick and, with `--smtp`, the email worker. Runs after the provider is attached; every
task is cancelled and awaited on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from simulator.api.appkeys import CLOCK, RAMP
from simulator.clock import Clock
from simulator.services.ramp_sweep import RampSweep

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


async def expire_forever(clock: Clock, sweep: RampSweep) -> None:
    while True:
        try:
            await sweep.expire_due()
        except Exception:
            log.exception("ramp expiry tick failed; retrying")
        due = sweep.next_expiry()
        wake = clock.time() + EXPIRY_TICK_S
        await clock.sleep_until(min(due, wake) if due is not None else wake)


async def ramp_background_context(app: web.Application) -> AsyncIterator[None]:
    ramp = app[RAMP]
    clock = app[CLOCK]
    tasks = [
        asyncio.create_task(sweep_forever(clock, ramp.sweep), name="ramp-sweep"),
        asyncio.create_task(expire_forever(clock, ramp.sweep), name="ramp-expiry"),
    ]
    if ramp.emails.smtp is not None:
        tasks.append(asyncio.create_task(ramp.emails.deliver_forever(), name="ramp-smtp"))
    try:
        yield
    finally:
        if ramp.emails.smtp is not None:
            await ramp.emails.drain(timeout_s=2.0)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
