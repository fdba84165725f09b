"""The RFQ area's wiring: `build_rfq` (auction, service, settlement and what they depend on),
`build_maker_sessions` (the maker stream's sessions over the area's registry) and its background
work, one fill indexer per chain and the settlement sweeper, which run after the chains are up;
every task is cancelled and awaited on shutdown. The indexers hand each fill to every subscriber
of the app's `FillFanout` (settlement, subscribed here; the rates feed's tape) and report their
progress to the app's `IndexProgress`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from rfqkit.tasks import cancel_and_wait, step_forever
from simulator.adapters.redis.roster import SharedRoster
from simulator.adapters.rfq.indexer import FillIndexer, IndexerSaved
from simulator.adapters.rfq.maker_stream import MakerStreamSessions, OtherInstances
from simulator.api.http.appkeys import (
    ACCESS,
    CHAINS,
    CLOCK,
    FILL_INDEX,
    FILLS,
    HEALTH,
    INSTANCES,
    RFQ,
    STATE,
    VENUE,
)
from simulator.api.http.forwarding import FORWARDING, Forwarding
from simulator.api.rfq.events import rfq_events
from simulator.clock import Clock
from simulator.errors import VenueUnavailable
from simulator.randomness import RandomSource
from simulator.runtime.lifecycle import CHAIN_SUPERVISOR
from simulator.runtime.timelines import timelines
from simulator.services.access.area import AccessArea
from simulator.services.access.keys import KeyService
from simulator.services.rfq.area import RfqArea
from simulator.services.rfq.auction import Auction
from simulator.services.rfq.deps import RfqDeps
from simulator.services.rfq.fleet_control import MakerControl
from simulator.services.rfq.funds import TakerFunds
from simulator.services.rfq.history import RFQ_STEPS, RepliesSaved, RfqHistory
from simulator.services.rfq.inventory import MakerInventory
from simulator.services.rfq.makers import MakerRegistry
from simulator.services.rfq.ports import (
    FrameTap,
    HoldLedger,
    ReservationLedger,
    RfqChainReads,
    RfqStore,
    SimulatedFleet,
    SlotLedger,
)
from simulator.services.rfq.pricing import IndicativePricing
from simulator.services.rfq.service import RfqService
from simulator.services.rfq.settlement import Settlement, SettlementSettings
from simulator.services.rfq.slots import OutstandingSlots
from simulator.services.rfq.store import RfqStoreSaved
from simulator.services.rfq.take_over import TakeOver
from simulator.services.rfq.time_control import RfqTimeControl
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.events import EventLog, EventLogSaved
from simulator.services.shared.fills import FillFanout
from simulator.services.shared.owners import RecordOwners, SoleOwner
from simulator.services.shared.state import SavedAttributes, StateParticipant
from simulator.services.shared.timelines import EventSteps, TimelineState
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import Settings

log = logging.getLogger("rfqsim.background")

SWEEP_MAX_SLEEP_S = 0.25  # new quotes appear between sweeps; never sleep longer than this
# The running fill indexers by chain id, filled by background_context (the v1 status reads them).
FILL_INDEXERS: web.AppKey[dict[int, FillIndexer]] = web.AppKey("fill_indexers")
# Several instances: the records of an instance gone, taken over here (services/rfq/take_over.py)
TAKE_OVER: web.AppKey[TakeOver] = web.AppKey("take_over")
TAKE_OVER_EVERY_S = 1.0  # how often the first instance looks for instances gone


def build_rfq(
    settings: Settings,
    clock: Clock,
    random: RandomSource,
    access: AccessArea,
    venue: VenueDirectory,
    *,
    reads: RfqChainReads,
    fleet: SimulatedFleet,
    fills: FillFanout,
    store: RfqStore,
    events: EventLog,
    changes: ChangeFeed | None = None,
    slots: SlotLedger | None = None,
    reservations: ReservationLedger | None = None,
    holds: HoldLedger | None = None,
    owners: RecordOwners | None = None,
) -> RfqArea:
    """The RFQ area on its ports: the chain reads, the simulated fleet /_sim/makers controls,
    the record store, the event log (the app passes the real ones, unit tests fakes), the
    outstanding-RFQ slots, the taker reservations, the maker holds and which instance holds each
    RFQ (in memory, or this instance alone, unless given: the shared engine's)."""
    registry = MakerRegistry(clock)
    history = RfqHistory(timelines("rfqs", RFQ_STEPS, clock, settings, changes))
    registry.on_late = lambda maker, quote_id, rfq_id, waited_s, kind: history.answered_late(
        rfq_id, maker.wallet, maker.maker_id, quote_id, waited_s * 1000, kind
    )
    pricing = IndicativePricing(clock, registry)
    inventory = holds or MakerInventory(clock)
    deps = RfqDeps(
        venue=venue,
        proofs=access.proofs,
        slots=slots or OutstandingSlots(clock),
        funds=TakerFunds(clock, reads, reservations),
        inventory=inventory,
        makers=registry,
        pricing=pricing,
        faults=access.faults,
        limits=lambda: access.limits,
        history=history,
        owners=owners or SoleOwner(),
    )
    auction = Auction(clock, random.fork("auction"), registry, pricing, inventory, reads, history)
    service = RfqService(clock, random.fork("rfq"), deps, auction, store)
    events.subscribers.append(EventSteps(history.timelines))
    settlement = Settlement(
        clock,
        store,
        deps,
        rfq_events(events),
        reads,
        SettlementSettings(
            expiry_grace_s=settings.expiry_grace_s,
            retention_s=settings.retention.rfq_after_correction_s,
            in_memory_s=settings.retention.rfq_in_memory_s,
        ),
    )
    fills.subscribe(settlement.on_fill)
    return RfqArea(
        service=service,
        settlement=settlement,
        events=events,
        maker_control=MakerControl(registry, fleet),
        store=store,
        time_control=RfqTimeControl(clock, store, settlement, deps.slots, deps.funds),
        deps=deps,
    )


def rfq_state(area: RfqArea) -> list[StateParticipant]:
    """The RFQ area's state: records, holds, reservations, slots, the event log. Who is online
    is not state: makers reconnect after a reset."""
    return [
        SavedAttributes("rfq.store", area.store, RfqStoreSaved, after_load=area.store.reindex_open),
        area.deps.inventory.state("rfq.inventory"),
        area.deps.funds.state("rfq.funds"),
        area.deps.slots.state("rfq.slots"),
        SavedAttributes("rfq.events", area.events, EventLogSaved),
        TimelineState("rfq.timelines", area.deps.history.timelines),
        SavedAttributes("rfq.replies", area.deps.history, RepliesSaved),
    ]


def indexer_state(chain_id: int, indexer: FillIndexer) -> StateParticipant:
    """Where a chain's fill index stands: restored with the chain, so a fill mined but not yet
    indexed when a snapshot was taken is indexed again after its restore."""
    return SavedAttributes(
        f"rfq.indexer.{chain_id}", indexer, IndexerSaved, after_load=indexer.state_restored
    )


def build_maker_sessions(
    area: RfqArea,
    venue: VenueDirectory,
    clock: Clock,
    keys: KeyService,
    frames: FrameTap | None = None,
    others: OtherInstances | None = None,
) -> MakerStreamSessions:
    """The maker stream's sessions; a key suspended or revoked ends its open connections;
    with `others` (several instances) a maker connected here is linked to each of them."""
    sessions = MakerStreamSessions(area.deps.makers, venue, clock, frames=frames, others=others)
    keys.withdrawn_listeners.append(sessions.credential_withdrawn)
    return sessions


async def take_over_departed(
    forwarding: Forwarding, take_over: TakeOver, monotonic: Callable[[], float]
) -> None:
    """While this instance is the venue's first alive, take over every second the live
    records of the instances gone (SC19)."""
    while True:
        await asyncio.sleep(TAKE_OVER_EVERY_S)
        try:
            others = await forwarding.others(fresh=True)
            if all(entry.id > forwarding.here for entry in others):
                alive = [forwarding.here, *(entry.id for entry in others)]
                await take_over.departed(alive, monotonic())
        except VenueUnavailable:
            pass  # the engine is away: the next round looks again
        except Exception:  # one failed round must not end the take-over for good
            log.exception("taking over the records of instances gone failed; retrying")


async def instance_exited(app: web.Application, pid: int, code: int) -> None:
    """At the venue's first instance, for another one whose process exited while the venue
    runs (cli.serve): off the venue's list at once, and its live records taken over at the
    next round without waiting for its lease to end (SC19)."""
    roster, forwarding = app[INSTANCES], app[FORWARDING]
    assert isinstance(roster, SharedRoster)
    assert forwarding is not None
    gone = [entry.id for entry in await roster.instances() if entry.pid == pid]
    for instance in gone:
        log.warning(
            "instance %d (pid %d) exited with %d: its RFQs are taken over", instance, pid, code
        )
        await roster.evict(instance)
        app[TAKE_OVER].gone_for_sure(instance)
    await forwarding.others(fresh=True)  # what this instance sends on goes to the living


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
            chain,
            venue.contracts.reactor,
            app[FILLS],
            app[ACCESS].faults,
            app[FILL_INDEX],
            app[CLOCK].monotonic,
        )
        app[FILL_INDEXERS][chain_id] = indexer
        app[STATE].registry.register(indexer_state(chain_id, indexer))
        app[HEALTH].report(f"fillIndex:{chain_id}", True)  # the supervisor judges it from now on
        if CHAIN_SUPERVISOR in app:
            app[CHAIN_SUPERVISOR].restart_listeners.append(indexer.rewind)
        tasks.append(asyncio.create_task(indexer.run(), name=f"indexer-{chain_id}"))
    if (forwarding := app[FORWARDING]) is not None:
        taking_over = take_over_departed(forwarding, app[TAKE_OVER], app[CLOCK].monotonic)
        tasks.append(asyncio.create_task(taking_over, name="take-over"))
    try:
        yield
    finally:
        await cancel_and_wait(tasks)
        for chain_id in app[FILL_INDEXERS]:
            app[STATE].registry.unregister(f"rfq.indexer.{chain_id}")
        app[FILL_INDEXERS].clear()
