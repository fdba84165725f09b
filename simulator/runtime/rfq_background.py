"""Background work of the RFQ venue: one fill indexer per chain and the settlement sweeper.
Runs after the chains are up; every task is cancelled and awaited on shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.tasks import cancel_and_wait, step_forever
from simulator.adapters.rfq.indexer import FillIndexer
from simulator.api.appkeys import CHAINS, CLOCK, RFQ, SERVICES, VENUE

log = logging.getLogger("rfqsim.background")

SWEEP_MAX_SLEEP_S = 0.25  # new quotes appear between sweeps; never sleep longer than this


async def background_context(app: web.Application) -> AsyncIterator[None]:
    runtime = app[RFQ]
    settlement = runtime.settlement
    sweeper = step_forever(
        app[CLOCK],
        settlement.sweep,
        settlement.next_due,
        max_sleep_s=SWEEP_MAX_SLEEP_S,
        log=log,
        what="settlement sweep",
    )
    tasks = [asyncio.create_task(sweeper, name="sweeper")]
    for chain_id, chain in app[CHAINS].items():
        venue = app[VENUE].chains[chain_id]
        indexer = FillIndexer(
            chain, venue.contracts.reactor, runtime.settlement.on_fill, app[SERVICES].faults
        )
        tasks.append(asyncio.create_task(indexer.run(), name=f"indexer-{chain_id}"))
    try:
        yield
    finally:
        await cancel_and_wait(tasks)
