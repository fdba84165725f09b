"""The app factory: builds every part from settings, with no module-level state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from aiohttp import web

from rfqkit.local_guard import HostCheck
from simulator.adapters.access.signatures import ChainSignatureChecker
from simulator.adapters.chain.probes import ChainDependencyProbe
from simulator.adapters.chain.snapshots import AnvilChainStates
from simulator.adapters.chain.wallet_balances import ChainWalletBalances
from simulator.adapters.limit_orders.chain_reads import BookChainReads
from simulator.adapters.ramp.provider_wire import parse_transfer
from simulator.adapters.rfq.chain_reads import ChainReads
from simulator.adapters.rfq.indexer import IndexCatchUp
from simulator.adapters.store.delivery_archive import SqliteDeliveryArchive
from simulator.adapters.store.durable_rows import SqliteDurableRows
from simulator.adapters.store.history_db import HISTORY_FILE, HistoryDb, HistoryState
from simulator.adapters.store.journal_archive import SqliteJournalArchive
from simulator.adapters.store.rfq_archive import SqliteRfqArchive
from simulator.adapters.store.timeline_archive import SqliteTimelineArchive
from simulator.adapters.store.trade_archive import SqliteTradeArchive
from simulator.api.access import control as access_control
from simulator.api.access.middleware import access_middleware, add_rate_limit_headers
from simulator.api.feed import handlers as feed
from simulator.api.feed.cache import FEED_CACHE, FeedCache
from simulator.api.http.appkeys import (
    ACCESS,
    BOOK,
    CHAINS,
    CHANGES,
    CLOCK,
    DURABLE,
    ERROR_STYLES,
    FEED,
    FILL_INDEX,
    FILLS,
    GC_PAUSES,
    HEALTH,
    HISTORY,
    IDEMPOTENCY,
    JOURNAL,
    LADDER_BYTES,
    MAKER_NAMES,
    MAKER_SESSIONS,
    OPENAPI_CACHE,
    OPERATIONS,
    RAMP,
    RANDOM,
    RFQ,
    ROUTES,
    SCENARIOS,
    SETTINGS,
    STATE,
    SWAPS,
    TIMELINES,
    V1,
    V1_BOOK_BYTES,
    VENUE,
    WALLET_BALANCES,
    WEBHOOKS,
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
from simulator.api.swaps import handlers as swaps
from simulator.api.v1 import control as v1_control
from simulator.api.v1 import handlers as v1
from simulator.api.v1.access import check_v1_operations
from simulator.api.webhooks import control as webhooks_control
from simulator.api.webhooks import handlers as webhooks
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.access import access_state, build_access
from simulator.runtime.chains import chains_context
from simulator.runtime.durable import durable_context
from simulator.runtime.feed import build_feed, corridor_prices, feed_state
from simulator.runtime.full_collections import full_collections_context
from simulator.runtime.housekeeping import housekeeping_context
from simulator.runtime.lifecycle import SHUTDOWN, Shutdown, stop_step
from simulator.runtime.limit_orders import book_context, book_state, build_book
from simulator.runtime.makers import (
    FLEET,
    FleetHolder,
    FleetRestarter,
    fleet_names,
    simulated_fleet,
)
from simulator.runtime.provider import PROVIDER, ProviderHolder, provider_context
from simulator.runtime.ramp import build_ramp, ramp_state
from simulator.runtime.ramp_background import ramp_background_context
from simulator.runtime.rfq import (
    FILL_INDEXERS,
    background_context,
    build_maker_sessions,
    build_rfq,
    rfq_state,
)
from simulator.runtime.scenario import AppScenarioTargets, build_scenarios, scenario_context
from simulator.runtime.state import build_state_control, shared_state
from simulator.runtime.swaps import build_swaps, swaps_state
from simulator.runtime.timelines import timelines
from simulator.runtime.v1 import build_v1
from simulator.runtime.webhooks import (
    WEBHOOK_ADAPTERS,
    build_webhooks,
    webhook_adapters,
    webhooks_context,
    webhooks_state,
)
from simulator.services.ramp.history import TRANSFER_STEPS
from simulator.services.rfq.store import TieredRfqStore
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.events import EventLog
from simulator.services.shared.fills import FillFanout, IndexProgress
from simulator.services.shared.health import DependencyHealth
from simulator.services.shared.idempotency import IdempotencyStore
from simulator.services.shared.state import ForgetOnLoad, StateRegistry
from simulator.services.shared.venue import ChainWithoutContracts, VenueDirectory
from simulator.services.sim.durable import DurableConfiguration
from simulator.services.sim.gc_pauses import GcPauseRecorder
from simulator.services.sim.journal import RequestJournal
from simulator.settings import Settings

# aiohttp's own cap: the largest route cap (the ramp kyc route's 64 MiB transport cap); every
# other route enforces its smaller JSON cap in parse_body (413 from either).
CLIENT_MAX_SIZE = 64 * 1024 * 1024


async def close_maker_streams(app: web.Application) -> None:
    """On stop, every maker socket ends with 1001 and its closing handshake before the server
    drops the connections that are left, within the shutdown grace."""
    await app[MAKER_SESSIONS].close_all(timeout_s=app[SETTINGS].api.shutdown_grace_s)


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
        sim_console,
        access_control,
        rfq_control,
        rfq_time_control,
        webhooks_control,
        ramp_control,
        v1_control,
        book_control,
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
            journal_middleware,
            error_middleware,
            guard_middleware,  # before anything acts on the request or reads state
            state_gate_middleware,
            access_middleware,
            idempotency_middleware,
        ],
        client_max_size=CLIENT_MAX_SIZE,
    )
    app[SETTINGS] = settings
    app[HOST_CHECK] = HostCheck(
        bind=settings.api.host, allowed=tuple(settings.api.allowed_hosts), server="rfqsim serve"
    )
    app[CLOCK] = clock or Clock()
    app[RANDOM] = RandomSource(settings.seed)
    app[VENUE] = VenueDirectory(
        without_contracts={
            c.chain_id: ChainWithoutContracts(c.chain_id, c.environment, c.name)
            for c in settings.chains_without_contracts
        }
    )
    app[CHAINS] = {}
    app[FILL_INDEXERS] = {}
    app[HEALTH] = DependencyHealth(app[CLOCK].time)  # reported by the chain supervisor & co.
    app[SHUTDOWN] = Shutdown()
    app[ACCESS] = build_access(
        settings, app[CLOCK], app[RANDOM], signatures=ChainSignatureChecker(app[CHAINS])
    )
    app[FLEET] = FleetHolder()  # filled once the API listens (cli.serve starts the fleet)
    app[FILLS] = FillFanout()  # the fill indexers hand every fill to each subscriber
    app[FILL_INDEX] = IndexProgress()
    app[CHANGES] = ChangeFeed(  # what changed, for the console's live stream
        max_subscribers=settings.stream.max_subscribers,
        max_queued_bytes=settings.stream.max_queued_kib * 1024,
    )
    app[WALLET_BALANCES] = ChainWalletBalances(app[CHAINS])
    app[MAKER_NAMES] = fleet_names(settings.makers)
    # What is at rest: in the state directory (kept across restarts), else a temporary file
    # removed on stop.
    state_dir = settings.state.dir
    history_db = HistoryDb(Path(state_dir) / HISTORY_FILE if state_dir is not None else None)
    app[HISTORY] = history_db
    rfq_archive = SqliteRfqArchive(history_db)
    journal_archive = SqliteJournalArchive(history_db)
    delivery_archive = SqliteDeliveryArchive(history_db)
    trade_archive = SqliteTradeArchive(history_db)
    app[RFQ] = build_rfq(
        settings,
        app[CLOCK],
        app[RANDOM],
        app[ACCESS],
        app[VENUE],
        reads=ChainReads(app[CHAINS]),
        fleet=simulated_fleet(app[FLEET], settings.makers_process),
        fills=app[FILLS],
        store=TieredRfqStore(archive=rfq_archive),
        events=EventLog(keep=settings.retention.events_kept),
        changes=app[CHANGES],
    )
    if settings.journal.enabled:
        app[JOURNAL] = RequestJournal(
            app[CLOCK].time,
            capacity=settings.journal.requests_kept,
            stream_capacity=settings.journal.frames_kept,
            changes=app[CHANGES].mark,
            archive=journal_archive,
        )
    app[MAKER_SESSIONS] = build_maker_sessions(
        app[RFQ], app[VENUE], app[CLOCK], app[ACCESS].keys, app.get(JOURNAL)
    )
    app.on_shutdown.append(close_maker_streams)
    app[BOOK] = build_book(
        settings,
        app[CLOCK],
        app[RANDOM],
        app[VENUE],
        reads=BookChainReads(app[CHAINS]),
        funding=ChainReads(app[CHAINS]),
        signatures=ChainSignatureChecker(app[CHAINS]),
        bids=app[RFQ].deps.makers,
        fills=IndexCatchUp(app[FILL_INDEXERS]),
        changes=app[CHANGES],
    )
    app[FEED] = build_feed(
        settings,
        app[CLOCK],
        app[VENUE],
        prices=corridor_prices(app[VENUE], app[RFQ], app[BOOK]),
        fills=app[FILLS],
        index=app[FILL_INDEX],
        trades=trade_archive,
    )
    app[FEED_CACHE] = FeedCache(app[CLOCK], settings.feed.cache_s)
    app[SWAPS] = build_swaps(settings, app[CLOCK], app[RANDOM], app[BOOK], app[CHANGES])
    app[FILLS].subscribe(app[BOOK].service.on_fill)
    app[FILLS].subscribe(app[SWAPS].service.on_fill)
    app[WEBHOOK_ADAPTERS] = webhook_adapters(settings.webhooks)
    app[WEBHOOKS] = build_webhooks(
        settings.webhooks,
        app[CLOCK],
        app[RANDOM].fork("webhooks"),
        transport=app[WEBHOOK_ADAPTERS].sender,
        certificates=app[WEBHOOK_ADAPTERS].ca,
        archive=delivery_archive,
    )
    for events in (app[RFQ].events, app[BOOK].events, app[SWAPS].events):
        events.subscribers.append(app[WEBHOOKS].dispatcher)
    app[V1] = build_v1(
        settings,
        app[CLOCK],
        app[VENUE],
        probe=ChainDependencyProbe(app[CHAINS], app[FILL_INDEXERS], app[ACCESS].faults),
    )
    app[IDEMPOTENCY] = IdempotencyStore(
        app[CLOCK],
        ttl_s=settings.idempotency.ttl_s,
        max_records=settings.idempotency.max_records,
    )
    app[RAMP] = build_ramp(
        settings.ramp,
        app[CLOCK],
        app[RANDOM].fork("ramp"),
        app[ACCESS].proofs,
        production=settings.environment == "production",
        parse_transfer=parse_transfer,
        token_decimals={t.symbol: t.decimals for c in settings.chains for t in c.tokens},
        history=timelines("transfers", TRANSFER_STEPS, app[CLOCK], settings, app[CHANGES]),
    )
    app[TIMELINES] = {
        history.topic: history
        for history in (
            app[RFQ].deps.history.timelines,
            app[SWAPS].history,
            app[BOOK].history,
            app[RAMP].history,
        )
    }
    timeline_archive = SqliteTimelineArchive(history_db)
    for area_timelines in app[TIMELINES].values():
        area_timelines.archive = timeline_archive  # older ones: read from the history file
    # Everything reset, snapshots and the state directory put back: each area's participants
    # (the fill indexers and the in-process provider add theirs once they run).
    registry = StateRegistry()
    registry.register(
        *shared_state(app[CLOCK], app[RANDOM], app[IDEMPOTENCY]),
        *access_state(app[ACCESS]),
        *rfq_state(app[RFQ]),
        *feed_state(app[FEED]),
        *webhooks_state(app[WEBHOOKS]),
        *ramp_state(app[RAMP]),
        *book_state(app[BOOK]),
        *swaps_state(app[SWAPS]),
    )
    # The history file as a whole: snapshots and reset copy it with the engine's backup.
    app[DURABLE] = DurableConfiguration(registry, SqliteDurableRows(history_db))
    registry.register(
        HistoryState(
            history_db,
            [
                rfq_archive.restored,
                timeline_archive.restored,
                journal_archive.restored,
                delivery_archive.restored,
                trade_archive.restored,
                app[DURABLE].forget_written,
            ],
        )
    )
    app[SCENARIOS] = build_scenarios(app[CLOCK], AppScenarioTargets(app))
    # Not saved, but never outliving a reset: a test reads only its own requests, no answer
    # cached from the old state is served, a running scenario stops.
    registry.register(
        ForgetOnLoad("scenario", app[SCENARIOS].forget),
        ForgetOnLoad("feed.cache", app[FEED_CACHE].clear),
    )
    if JOURNAL in app:
        # A reset or a restore forgets every request, in memory and in the history file (the
        # file's rows as the snapshot had them too); a restart on a state directory keeps them.
        registry.register(ForgetOnLoad("journal", app[JOURNAL].forget, kept_in_file=True))
    # Not state either: tells the console's live readers that everything was replaced.
    registry.register(ForgetOnLoad("console", lambda: app[CHANGES].mark("state")))
    app[WEBHOOKS].outbox.changes = app[CHANGES].mark
    app[CLOCK].add_listener(_clock_moved(app[CHANGES]))
    app[sim_stream.STREAM_PUBLISHER] = sim_stream.build_publisher(app)
    app.on_shutdown.append(_end_streams)  # open console pages must not hold up a stop
    chains = app[CHAINS]  # filled at start-up
    app[STATE] = build_state_control(
        registry,
        app[CLOCK],
        chains=AnvilChainStates(chains, lambda: app[CLOCK].offset_seconds),
        fleet=FleetRestarter(app),
        drain_s=settings.state.drain_s,
    )
    routes = build_routes(control_api=settings.api.control_api)
    app[ROUTES] = routes
    app[OPERATIONS] = routes.by_name()
    app[ERROR_STYLES] = routes.error_styles()
    app[OPENAPI_CACHE] = {}
    app[LADDER_BYTES] = {}
    app[V1_BOOK_BYTES] = {}
    routes.register(app.router)
    app.on_response_prepare.append(add_request_id_header)
    app.on_response_prepare.append(add_server_timing)
    app.on_response_prepare.append(add_rate_limit_headers)
    app.on_response_prepare.append(feed.add_cors_headers)
    app[PROVIDER] = ProviderHolder()
    app[GC_PAUSES] = GcPauseRecorder()
    # Started in this order and closed in the reverse; each closing is a timed step of the stop.
    contexts = [
        _gc_pauses_context,
        full_collections_context,  # the simulator's, not CPython's schedule
        _history_context,  # closed (and its file removed) last
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
    for context in contexts:
        app.cleanup_ctx.append(stop_step(context))
    return app
