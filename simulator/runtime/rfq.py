"""The RFQ area's wiring: `build_rfq` (auction, service, settlement and what they depend on),
`build_maker_sessions` (the maker stream's sessions over the area's registry) and its background
work, one fill indexer per chain and the settlement sweeper, which run after the
chains are up; every task is cancelled and awaited on shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.chain import AnvilChain
from rfqkit.tasks import cancel_and_wait, step_forever
from simulator.adapters.rfq.chain_reads import ChainReads
from simulator.adapters.rfq.indexer import FillIndexer, FillIndexes
from simulator.adapters.rfq.maker_stream import MakerStreamSessions
from simulator.api.http.appkeys import ACCESS, CHAINS, CLOCK, RFQ, VENUE
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.access.area import AccessArea
from simulator.services.rfq.area import RfqArea
from simulator.services.rfq.auction import Auction
from simulator.services.rfq.deps import RfqDeps
from simulator.services.rfq.fleet_control import MakerControl
from simulator.services.rfq.funds import TakerFunds
from simulator.services.rfq.inventory import MakerInventory
from simulator.services.rfq.makers import MakerRegistry
from simulator.services.rfq.ports import SimulatedFleet
from simulator.services.rfq.pricing import IndicativePricing
from simulator.services.rfq.service import RfqService
from simulator.services.rfq.settlement import Settlement, SettlementSettings
from simulator.services.rfq.slots import OutstandingSlots
from simulator.services.shared.events import EventLog
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import Settings

log = logging.getLogger("rfqsim.background")

SWEEP_MAX_SLEEP_S = 0.25  # new quotes appear between sweeps; never sleep longer than this

# Every chain's fill indexer and the areas it hands fills to (RFQ settlement, the v1 book, v1
# swaps): built with the app, the indexers added once the chains run.
FILLS: web.AppKey[FillIndexes] = web.AppKey("fills")


def build_rfq(
    settings: Settings,
    clock: Clock,
    random: RandomSource,
    access: AccessArea,
    venue: VenueDirectory,
    chains: dict[int, AnvilChain],
    fleet: SimulatedFleet,
) -> RfqArea:
    reads = ChainReads(chains)
    registry = MakerRegistry(clock)
    pricing = IndicativePricing(clock, registry)
    inventory = MakerInventory(clock)
    deps = RfqDeps(
        venue=venue,
        proofs=access.proofs,
        slots=OutstandingSlots(clock),
        funds=TakerFunds(clock, reads),
        inventory=inventory,
        makers=registry,
        pricing=pricing,
        faults=access.faults,
        limits=lambda: access.limits,
    )
    auction = Auction(clock, random.fork("auction"), registry, pricing, inventory, reads)
    service = RfqService(clock, random.fork("rfq"), deps, auction)
    events = EventLog()
    settlement = Settlement(
        clock,
        service,
        deps,
        events,
        reads,
        SettlementSettings(expiry_grace_s=settings.expiry_grace_s),
    )
    return RfqArea(
        service=service,
        settlement=settlement,
        makers=registry,
        events=events,
        maker_control=MakerControl(registry, fleet),
    )


def build_maker_sessions(area: RfqArea, venue: VenueDirectory, clock: Clock) -> MakerStreamSessions:
    return MakerStreamSessions(area.makers, venue, clock)


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
    fills = app[FILLS]
    for chain_id, chain in app[CHAINS].items():
        venue = app[VENUE].chains[chain_id]
        indexer = FillIndexer(chain, venue.contracts.reactor, fills.deliver, app[ACCESS].faults)
        fills.indexers[chain_id] = indexer
        tasks.append(asyncio.create_task(indexer.run(), name=f"indexer-{chain_id}"))
    try:
        yield
    finally:
        await cancel_and_wait(tasks)
        fills.indexers.clear()
