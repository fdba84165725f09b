"""Background work of the RFQ venue: one fill indexer per chain and the settlement sweeper.
Runs after the chains are up; every task is cancelled and awaited on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from simulator.adapters.indexer import FillIndexer
from simulator.api.appkeys import CHAINS, CLOCK, RFQ, SERVICES, VENUE
from simulator.clock import Clock
from simulator.services.settlement import Settlement

log = logging.getLogger("rfqsim.background")

SWEEP_MAX_SLEEP_S = 0.25  # new quotes appear between sweeps; never sleep longer than this


async def sweep_forever(clock: Clock, settlement: Settlement) -> None:
    while True:
        try:
            await settlement.sweep()
        except Exception:
            log.exception("settlement sweep failed; retrying")
        due = settlement.next_due()
        wake = clock.time() + SWEEP_MAX_SLEEP_S
        await clock.sleep_until(min(due, wake) if due is not None else wake)


async def background_context(app: web.Application) -> AsyncIterator[None]:
    runtime = app[RFQ]
    tasks = [asyncio.create_task(sweep_forever(app[CLOCK], runtime.settlement), name="sweeper")]
    for chain_id, chain in app[CHAINS].items():
        venue = app[VENUE].chains[chain_id]
        indexer = FillIndexer(
            chain, venue.contracts.reactor, runtime.settlement.on_fill, app[SERVICES].faults
        )
        tasks.append(asyncio.create_task(indexer.run(), name=f"indexer-{chain_id}"))
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
