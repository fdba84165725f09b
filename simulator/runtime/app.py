"""The app factory: builds every part from settings, with no module-level state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from aiohttp import web

from rfqkit.local_guard import HostCheck
from simulator.adapters.chain.snapshots import AnvilChainStates
from simulator.adapters.chain.wallet_balances import ChainWalletBalances
from simulator.adapters.redis.configuration import SharedConfiguration
from simulator.adapters.redis.faults import SharedInjectedErrors
from simulator.adapters.redis.idempotency import SharedIdempotency
from simulator.adapters.redis.roster import SharedRoster
from simulator.adapters.store.durable_rows import SqliteDurableRows
from simulator.adapters.store.history_db import HISTORY_FILE, HistoryDb, HistoryState
from simulator.adapters.store.timeline_archive import SqliteTimelineArchive
from simulator.api.access import control as access_control
from simulator.api.access.middleware import access_middleware, add_rate_limit_headers
from simulator.api.feed import handlers as feed
from simulator.api.http import configuration
from simulator.api.http.appkeys import (
    CHAINS,
    CHANGES,
    CLOCK,
    CONFIGURATION,
    DURABLE,
    ERROR_STYLES,
    FILL_INDEX,
    FILLS,
    GC_PAUSES,
    HEALTH,
    HISTORY,
    IDEMPOTENCY,
    INJECTED_ERRORS,
    INSTANCES,
    LADDER_BYTES,
    MAKER_NAMES,
    OPENAPI_CACHE,
    OPERATIONS,
    RANDOM,
    RFQ,
    ROUTES,
    SCENARIOS,
    SETTINGS,
    STATE,
    TIMELINES,
    V1_BOOK_BYTES,
    VENUE,
    WALLET_BALANCES,
)
from simulator.api.http.configuration import configuration_middleware
from simulator.api.http.forwarding import (
    FORWARDING,
    Forwarding,
    add_served_by,
    forwarding_middleware,
    hop_middleware,
)
from simulator.api.http.guard import HOST_CHECK, guard_middleware
from simulator.api.http.idempotency import idempotency_middleware
from simulator.api.http.journal import journal_middleware
from simulator.api.http.middleware import add_request_id_header, error_middleware
from simulator.api.http.routes import RouteTable
from simulator.api.http.server_timing import add_server_timing
from simulator.api.http.state_gate import state_gate_middleware
from simulator.api.limit_orders import control as book_control
from simulator.api.limit_orders import handlers as limit_orders
from simulator.api.meta import docs, health
from simulator.api.ramp import control as ramp_control
from simulator.api.ramp import handlers as ramp
from simulator.api.ramp import transfer_handlers as ramp_transfers
from simulator.api.rfq import control as rfq_control
from simulator.api.rfq import handlers as rfq
from simulator.api.rfq import maker_stream
from simulator.api.rfq import time_control as rfq_time_control
from simulator.api.sim import chains as sim_chains
from simulator.api.sim import console as sim_console
from simulator.api.sim import handlers as sim
from simulator.api.sim import index as sim_index
from simulator.api.sim import journal as sim_journal
from simulator.api.sim import runtime as sim_runtime
from simulator.api.sim import scenarios as sim_scenarios
from simulator.api.sim import state as sim_state
from simulator.api.sim import stream as sim_stream
from simulator.api.sim import timelines as sim_timelines
from simulator.api.sim import venue_stream as sim_venue_stream
from simulator.api.swaps import handlers as swaps
from simulator.api.v1 import control as v1_control
from simulator.api.v1 import handlers as v1
from simulator.api.v1.access import check_v1_operations
from simulator.api.webhooks import control as webhooks_control
from simulator.api.webhooks import handlers as webhooks
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.areas import AREAS, Wiring
from simulator.runtime.chains import chains_context
from simulator.runtime.durable import durable_context
from simulator.runtime.full_collections import full_collections_context
from simulator.runtime.housekeeping import housekeeping_context
from simulator.runtime.lifecycle import SHUTDOWN, CleanupContext, Shutdown, stop_step
from simulator.runtime.limit_orders import book_context
from simulator.runtime.makers import (
    FLEET,
    FleetHolder,
    FleetRestarter,
    fleet_names,
)
from simulator.runtime.provider import provider_context
from simulator.runtime.ramp_background import ramp_background_context
from simulator.runtime.rfq import TAKE_OVER, background_context
from simulator.runtime.scenario import AppScenarioTargets, build_scenarios, scenario_context
from simulator.runtime.shared_engine import SHARED_ENGINE, shared_engine, shared_engine_context
from simulator.runtime.state import build_state_control, shared_state
from simulator.runtime.webhooks import (
    webhooks_context,
)
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.fills import FillFanout, IndexProgress
from simulator.services.shared.health import DependencyHealth
from simulator.services.shared.idempotency import IdempotencyStore
from simulator.services.shared.state import ForgetOnLoad, StateRegistry
from simulator.services.shared.venue import ChainWithoutContracts, VenueDirectory
from simulator.services.sim.durable import DurableConfiguration
from simulator.services.sim.gc_pauses import GcPauseRecorder
from simulator.services.sim.instances import SoleInstance
from simulator.settings import Settings

# aiohttp's own cap: the largest route cap (the ramp kyc route's 64 MiB transport cap); every
# other route enforces its smaller JSON cap in parse_body (413 from either).
CLIENT_MAX_SIZE = 64 * 1024 * 1024


def build_routes(*, control_api: bool = True) -> RouteTable:
    """Every operation; without ``control_api`` none under /_sim (the provider's inbound
    webhooks at /_provider stay: the sandbox needs them, a real deployment has its own)."""
    table = RouteTable()
    for area in (
        health,
        docs,
        rfq,
        ramp,
        ramp_transfers,
        webhooks,
        feed,
        v1,
        swaps,
        limit_orders,
        maker_stream,
        sim,
        sim_index,
        sim_state,
        sim_journal,
        sim_scenarios,
        sim_timelines,
        sim_chains,
        sim_runtime,
        sim_stream,
        sim_venue_stream,
        sim_console,
        access_control,
        rfq_control,
        rfq_time_control,
        webhooks_control,
        ramp_control,
        v1_control,
        book_control,
        configuration,
    ):
        area.add_routes(table)
    check_v1_operations(table.operations)  # v1's scopes exactly as spec 3's table
    if not control_api:
        table.operations = [op for op in table.operations if not op.path.startswith("/_sim")]
    return table


def _clock_moved(changes: ChangeFeed) -> Callable[[float], Awaitable[None]]:
    async def moved(seconds: float) -> None:
        changes.mark("clock")

    return moved


async def _end_streams(app: web.Application) -> None:
    app[CHANGES].close()
    await app[sim_stream.STREAM_PUBLISHER].stop()


async def _gc_pauses_context(app: web.Application) -> AsyncIterator[None]:
    """The collector's pauses are recorded while the app runs (GET /_sim/runtime)."""
    app[GC_PAUSES].install()
    yield
    app[GC_PAUSES].uninstall()


async def _history_context(app: web.Application) -> AsyncIterator[None]:
    yield
    await asyncio.to_thread(app[HISTORY].close)


def create_app(
    settings: Settings, *, clock: Clock | None = None, start_chains: bool = True
) -> web.Application:
    """`start_chains=False` builds the HTTP surface alone (unit tests of the edge)."""
    app = web.Application(
        # The journal outermost (it records every answer, errors included); the state gate
        # inside the error middleware (its 503 is rendered like every other error).
        middlewares=[
            hop_middleware,  # several instances: one sent by another is its client's
            journal_middleware,
            error_middleware,
            guard_middleware,  # before anything acts on the request or reads state
            state_gate_middleware,
            access_middleware,
            forwarding_middleware,  # several instances: served where its placement says
            idempotency_middleware,
            configuration_middleware,  # innermost: after the operation answered
        ],
        client_max_size=CLIENT_MAX_SIZE,
    )
    app[SETTINGS] = settings
    wiring = Wiring(app, _shared_parts(app, clock or Clock()))
    for area in AREAS:
        area.wire(wiring)
    _state(app, wiring)
    _routes(app)
    for context in _contexts(start_chains):
        app.cleanup_ctx.append(stop_step(context))
    return app


def _shared_parts(app: web.Application, clock: Clock) -> HistoryDb:
    """What every area is wired with; returns the history file."""
    settings = app[SETTINGS]
    app[HOST_CHECK] = HostCheck(
        bind=settings.api.host, allowed=tuple(settings.api.allowed_hosts), server="rfqsim serve"
    )
    app[CLOCK] = clock
    app[SHARED_ENGINE] = engine = shared_engine(settings)  # None: one instance, in memory
    # Instances sharing a venue draw distinct ids (the first draws what one process would).
    app[RANDOM] = RandomSource(settings.seed, engine.join() if engine is not None else 0)
    app[VENUE] = VenueDirectory(
        without_contracts={
            c.chain_id: ChainWithoutContracts(c.chain_id, c.environment, c.name)
            for c in settings.chains_without_contracts
        }
    )
    app[CHAINS] = {}  # filled at start-up
    app[HEALTH] = DependencyHealth(app[CLOCK].time)  # reported by the chain supervisor & co.
    app[SHUTDOWN] = Shutdown()
    app[FLEET] = FleetHolder()  # filled once the API listens (cli.serve starts the fleet)
    app[FILLS] = FillFanout()  # the fill indexers hand every fill to each subscriber
    app[FILL_INDEX] = IndexProgress()
    app[CHANGES] = ChangeFeed(  # what changed, for the console's live stream
        max_subscribers=settings.stream.max_subscribers,
        max_queued_bytes=settings.stream.max_queued_kib * 1024,
    )
    app[CLOCK].add_listener(_clock_moved(app[CHANGES]))
    app[WALLET_BALANCES] = ChainWalletBalances(app[CHAINS])
    app[MAKER_NAMES] = fleet_names(settings.makers)
    ttl_s, most = settings.idempotency.ttl_s, settings.idempotency.max_records
    app[IDEMPOTENCY] = (
        IdempotencyStore(app[CLOCK], ttl_s=ttl_s, max_records=most)
        if engine is None
        else SharedIdempotency(engine, app[CLOCK], ttl_s=ttl_s, max_records=most)
    )
    # What is at rest: in the state directory (kept across restarts), else a temporary file
    # removed on stop.
    state_dir = settings.state.dir
    history_db = HistoryDb(Path(state_dir) / HISTORY_FILE if state_dir is not None else None)
    app[HISTORY] = history_db
    app[GC_PAUSES] = GcPauseRecorder()
    return history_db


def _state(app: web.Application, wiring: Wiring) -> None:
    """Timelines, the state registry and the control over it: everything reset, snapshots and
    the state directory put back (the fill indexers and the in-process provider add theirs
    once they run)."""
    history_db = wiring.history
    app[TIMELINES] = {history.topic: history for history in wiring.timelines}
    timeline_archive = SqliteTimelineArchive(history_db)
    for area_timelines in wiring.timelines:
        area_timelines.archive = timeline_archive  # older ones: read from the history file
    registry = StateRegistry()
    registry.register(*shared_state(app[CLOCK], app[RANDOM], app[IDEMPOTENCY]), *wiring.state)
    engine, number = app[SHARED_ENGINE], app[RANDOM].instance
    app[CONFIGURATION] = (  # None: one instance, nothing to share
        None if engine is None else SharedConfiguration(registry, engine, number)
    )
    app[INSTANCES] = (
        SoleInstance() if engine is None else SharedRoster(engine, app[RANDOM].instance)
    )
    app[INJECTED_ERRORS] = None if engine is None else SharedInjectedErrors(engine)
    app[FORWARDING] = (
        None
        if engine is None
        else Forwarding(
            number,
            app[INSTANCES],
            app[RFQ].deps.owners,
            engine.shared_secret("hop-secret"),
            app[TAKE_OVER].record,
        )
    )
    # The history file as a whole: snapshots and reset copy it with the engine's backup.
    app[DURABLE] = DurableConfiguration(registry, SqliteDurableRows(history_db))
    registry.register(
        HistoryState(
            history_db,
            [*wiring.restored, timeline_archive.restored, app[DURABLE].forget_written],
        )
    )
    app[SCENARIOS] = build_scenarios(app[CLOCK], AppScenarioTargets(app))
    # Not saved, but never outliving a reset: a test reads only its own requests, no answer
    # cached from the old state is served, a running scenario stops.
    registry.register(ForgetOnLoad("scenario", app[SCENARIOS].forget), *wiring.forget)
    # Not state either: tells the console's live readers that everything was replaced.
    registry.register(ForgetOnLoad("console", lambda: app[CHANGES].mark("state")))
    app[sim_stream.STREAM_PUBLISHER] = sim_stream.build_publisher(app)
    app.on_shutdown.append(_end_streams)  # open console pages must not hold up a stop
    chains = app[CHAINS]  # filled at start-up
    app[STATE] = build_state_control(
        registry,
        app[CLOCK],
        chains=AnvilChainStates(chains, lambda: app[CLOCK].offset_seconds),
        fleet=FleetRestarter(app),
        drain_s=app[SETTINGS].state.drain_s,
    )


def _routes(app: web.Application) -> None:
    """Every operation on the router, the caches of rendered answers, the response headers."""
    routes = build_routes(control_api=app[SETTINGS].api.control_api)
    app[ROUTES] = routes
    app[OPERATIONS] = routes.by_name()
    app[ERROR_STYLES] = routes.error_styles()
    app[OPENAPI_CACHE] = {}
    app[LADDER_BYTES] = {}
    app[V1_BOOK_BYTES] = {}
    routes.register(app.router)
    app.on_response_prepare.append(add_request_id_header)
    app.on_response_prepare.append(add_served_by)
    app.on_response_prepare.append(add_server_timing)
    app.on_response_prepare.append(add_rate_limit_headers)
    app.on_response_prepare.append(feed.add_cors_headers)


def _contexts(start_chains: bool) -> list[CleanupContext]:
    """The app's background work: started in this order and closed in the reverse; each
    closing is a timed step of the stop."""
    contexts: list[CleanupContext] = [
        _gc_pauses_context,
        full_collections_context,  # the simulator's, not CPython's schedule
        _history_context,  # closed (and its file removed) last
        shared_engine_context,  # closed once nothing writes through it any more
        scenario_context,  # a running scenario's task ends with the app
        housekeeping_context,  # bounded memory: lapsed state is swept
        durable_context,  # keys, limits, endpoints: to the file as they change
        webhooks_context,  # needs no chain: registry and delivery work alone
    ]
    if start_chains:
        contexts += [
            chains_context,
            provider_context,  # the sandbox settles on the chains: after them
            ramp_background_context,  # re-checks need the provider attached
            background_context,
            book_context,
        ]
    return contexts
