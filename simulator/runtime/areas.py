"""The app's areas, each wiring itself: `create_app` builds what every area shares (clock,
random source, venue, chains, change feed, history file), then calls each `Area.wire` in `AREAS`
order; an area builds its services on their ports, puts them in the app under its keys, and
adds what the app collects from every area: its state participants (reset, snapshots, the state
directory), what its history-file archives do when the file is replaced, and what a reset
forgets. A new area is one function here and one line in `AREAS` (its routes go in
app.py `build_routes`, its background work, if any, in app.py's ordered contexts).

The order is the order of dependence: the RFQ area's maker sessions record into the journal,
the v1 book bids through the RFQ area's makers, the feed prices from both, swaps compose book
orders, webhooks carry the events of RFQs, book orders and swaps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from aiohttp import web

from simulator.adapters.access.signatures import ChainSignatureChecker
from simulator.adapters.chain.probes import ChainDependencyProbe
from simulator.adapters.limit_orders.chain_reads import BookChainReads
from simulator.adapters.ramp.provider_wire import parse_transfer
from simulator.adapters.redis.funds import SharedReservations
from simulator.adapters.redis.holds import SharedHolds
from simulator.adapters.redis.owners import SharedOwners
from simulator.adapters.redis.proofs import SharedProofs
from simulator.adapters.redis.slots import SharedSlots
from simulator.adapters.rfq.chain_reads import ChainReads
from simulator.adapters.rfq.indexer import IndexCatchUp
from simulator.adapters.sim.venue_journal import JournalToFirstInstance
from simulator.adapters.store.delivery_archive import SqliteDeliveryArchive
from simulator.adapters.store.history_db import HistoryDb
from simulator.adapters.store.journal_archive import SqliteJournalArchive
from simulator.adapters.store.rfq_archive import SqliteRfqArchive
from simulator.adapters.store.trade_archive import SqliteTradeArchive
from simulator.adapters.webhooks.venue_events import EventsToFirstInstance
from simulator.api.feed.cache import FEED_CACHE, FeedCache
from simulator.api.http.appkeys import (
    ACCESS,
    BOOK,
    CHAINS,
    CHANGES,
    CLOCK,
    FEED,
    FILL_INDEX,
    FILLS,
    JOURNAL,
    MAKER_SESSIONS,
    RAMP,
    RANDOM,
    RFQ,
    SETTINGS,
    SWAPS,
    V1,
    VENUE,
    WEBHOOKS,
)
from simulator.api.http.forwarding import FORWARDING
from simulator.api.sim.journal import JOURNAL_PATH
from simulator.api.webhooks.control import EVENTS_PATH
from simulator.runtime.access import access_state, build_access
from simulator.runtime.feed import build_feed, corridor_prices, feed_state
from simulator.runtime.limit_orders import book_state, build_book
from simulator.runtime.makers import FLEET, simulated_fleet
from simulator.runtime.provider import PROVIDER, ProviderHolder
from simulator.runtime.ramp import build_ramp, ramp_state
from simulator.runtime.rfq import (
    FILL_INDEXERS,
    TAKE_OVER,
    build_maker_sessions,
    build_rfq,
    rfq_state,
)
from simulator.runtime.shared_engine import SHARED_ENGINE, VENUE_EVENTS
from simulator.runtime.swaps import build_swaps, swaps_state
from simulator.runtime.timelines import timelines
from simulator.runtime.v1 import build_v1
from simulator.runtime.webhooks import (
    WEBHOOK_ADAPTERS,
    build_webhooks,
    webhook_adapters,
    webhooks_state,
)
from simulator.services.ramp.history import TRANSFER_STEPS
from simulator.services.rfq.settlement import CORRECTION_WINDOW_S
from simulator.services.rfq.store import TieredRfqStore
from simulator.services.rfq.take_over import TakeOver
from simulator.services.shared.events import EventLog, EventSink
from simulator.services.shared.state import ForgetOnLoad, StateParticipant
from simulator.services.shared.timelines import Timelines
from simulator.services.sim.instances import InstanceEntry
from simulator.services.sim.journal import RequestJournal


@dataclass
class Wiring:
    """What the areas are wired into, and what they hand back as they are wired."""

    app: web.Application
    history: HistoryDb  # the history file every archive writes to
    state: list[StateParticipant] = field(default_factory=list)  # in area order
    restored: list[Callable[[], None]] = field(default_factory=list)  # the file was replaced
    forget: list[ForgetOnLoad] = field(default_factory=list)  # not state; gone on a reset
    timelines: list[Timelines] = field(default_factory=list)  # each area's, for /_sim

    def add(
        self,
        state: list[StateParticipant],
        *,
        timelines: Timelines | None = None,
        archive: Callable[[], None] | None = None,
    ) -> None:
        """An area's state participants, its timelines and what its history-file archive does
        when the file is replaced (its `restored`)."""
        self.state += state
        if timelines is not None:
            self.timelines.append(timelines)
        if archive is not None:
            self.restored.append(archive)


@dataclass(frozen=True)
class Area:
    name: str
    wire: Callable[[Wiring], None]


def _access(w: Wiring) -> None:
    app, settings = w.app, w.app[SETTINGS]
    engine = app[SHARED_ENGINE]
    app[ACCESS] = build_access(
        settings,
        app[CLOCK],
        app[RANDOM],
        signatures=ChainSignatureChecker(app[CHAINS]),
        proofs=None if engine is None else SharedProofs(engine),
    )
    w.add(access_state(app[ACCESS]))


def _journal(w: Wiring) -> None:
    app, settings = w.app, w.app[SETTINGS]
    archive = SqliteJournalArchive(w.history)
    w.restored.append(archive.restored)
    if not settings.journal.enabled:
        return
    app[JOURNAL] = RequestJournal(
        app[CLOCK].time,
        capacity=settings.journal.requests_kept,
        stream_capacity=settings.journal.frames_kept,
        changes=app[CHANGES].mark,
        archive=archive,
    )
    if app[SHARED_ENGINE] is not None:  # several instances: the first one's is the venue's
        app[JOURNAL].relay = JournalToFirstInstance(
            app[JOURNAL],
            app[RANDOM].instance,
            partial(_first_known, app),
            partial(_first_instance, app),
            partial(_venue_headers, app),
            JOURNAL_PATH,
        )
    # A reset or a restore forgets every request, in memory and in the history file (the
    # file's rows as the snapshot had them too); a restart on a state directory keeps them.
    w.forget.append(ForgetOnLoad("journal", app[JOURNAL].forget, kept_in_file=True))


def _rfq(w: Wiring) -> None:
    app, settings = w.app, w.app[SETTINGS]
    archive = SqliteRfqArchive(w.history)
    engine = app[SHARED_ENGINE]
    app[FILL_INDEXERS] = {}  # filled by the background context once the chains run
    # How long an RFQ can be read: live (an hour is more than any quote), then at rest
    # through the correction window and the retention.
    keep_s = 3600 + CORRECTION_WINDOW_S + settings.retention.rfq_after_correction_s
    app[RFQ] = build_rfq(
        settings,
        app[CLOCK],
        app[RANDOM],
        app[ACCESS],
        app[VENUE],
        reads=ChainReads(app[CHAINS]),
        fleet=simulated_fleet(app[FLEET], settings.makers_process),
        fills=app[FILLS],
        store=TieredRfqStore(archive=archive),
        events=EventLog(keep=settings.retention.events_kept),
        changes=app[CHANGES],
        slots=None if engine is None else SharedSlots(engine, app[CLOCK]),
        reservations=None if engine is None else SharedReservations(engine, app[CLOCK]),
        holds=None if engine is None else SharedHolds(engine, app[CLOCK]),
        owners=None
        if engine is None
        else SharedOwners(engine, app[RANDOM].instance, keep_s, settings.shared.copy_at_rest_s),
    )
    owners = app[RFQ].deps.owners
    fills = IndexCatchUp(app[FILL_INDEXERS])
    app[TAKE_OVER] = TakeOver(app[RFQ].service, app[RFQ].settlement, owners, fills)
    if engine is not None:  # a reset or restore replaced this instance's records: those it
        w.forget.append(ForgetOnLoad("rfq.live", owners.forget_live))  # listed live are gone
    app[MAKER_SESSIONS] = build_maker_sessions(
        app[RFQ],
        app[VENUE],
        app[CLOCK],
        app[ACCESS].keys,
        app.get(JOURNAL),
        others=None if engine is None else partial(_other_instances, app),
    )
    app.on_shutdown.append(close_maker_streams)
    w.add(rfq_state(app[RFQ]), timelines=app[RFQ].deps.history.timelines, archive=archive.restored)


async def _first_instance(app: web.Application) -> InstanceEntry | None:
    forwarding = app[FORWARDING]  # built after the areas: read when an event is sent
    return None if forwarding is None else await forwarding.first()


def _first_known(app: web.Application) -> int | None:
    forwarding = app[FORWARDING]
    return None if forwarding is None else forwarding.first_known()


def _venue_headers(app: web.Application) -> dict[str, str]:
    forwarding = app[FORWARDING]
    return {} if forwarding is None else forwarding.venue_headers()


async def _other_instances(app: web.Application) -> list[InstanceEntry]:
    forwarding = app[FORWARDING]  # built after the areas: read when a maker connects
    return [] if forwarding is None else await forwarding.others()


async def close_maker_streams(app: web.Application) -> None:
    """On stop, every maker socket ends with 1001 and its closing handshake before the server
    drops the connections that are left, within the shutdown grace."""
    await app[MAKER_SESSIONS].close_all(timeout_s=app[SETTINGS].api.shutdown_grace_s)


def _book(w: Wiring) -> None:
    app, settings = w.app, w.app[SETTINGS]
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
    app[FILLS].subscribe(app[BOOK].service.on_fill)
    w.add(book_state(app[BOOK]), timelines=app[BOOK].history)


def _feed(w: Wiring) -> None:
    app, settings = w.app, w.app[SETTINGS]
    archive = SqliteTradeArchive(w.history)
    app[FEED] = build_feed(
        settings,
        app[CLOCK],
        app[VENUE],
        prices=corridor_prices(app[VENUE], app[RFQ], app[BOOK]),
        fills=app[FILLS],
        index=app[FILL_INDEX],
        trades=archive,
    )
    app[FEED_CACHE] = FeedCache(app[CLOCK], settings.feed.cache_s)
    w.add(feed_state(app[FEED]), archive=archive.restored)
    # No answer cached from the old state is served after a reset.
    w.forget.append(ForgetOnLoad("feed.cache", app[FEED_CACHE].clear))


def _swaps(w: Wiring) -> None:
    app = w.app
    app[SWAPS] = build_swaps(app[SETTINGS], app[CLOCK], app[RANDOM], app[BOOK], app[CHANGES])
    app[FILLS].subscribe(app[SWAPS].service.on_fill)
    w.add(swaps_state(app[SWAPS]), timelines=app[SWAPS].history)


def _webhooks(w: Wiring) -> None:
    app, settings = w.app, w.app[SETTINGS]
    archive = SqliteDeliveryArchive(w.history)
    app[WEBHOOK_ADAPTERS] = webhook_adapters(settings.webhooks)
    app[WEBHOOKS] = build_webhooks(
        settings.webhooks,
        app[CLOCK],
        app[RANDOM].fork("webhooks"),
        transport=app[WEBHOOK_ADAPTERS].sender,
        certificates=app[WEBHOOK_ADAPTERS].ca,
        archive=archive,
    )
    dispatcher: EventSink = app[WEBHOOKS].dispatcher
    if app[SHARED_ENGINE] is not None:  # several instances: the first one's worker delivers
        app[VENUE_EVENTS] = dispatcher = EventsToFirstInstance(
            dispatcher,
            app[RANDOM].instance,
            partial(_first_instance, app),
            partial(_venue_headers, app),
            EVENTS_PATH,
        )
    for events in (app[RFQ].events, app[BOOK].events, app[SWAPS].events):
        events.subscribers.append(dispatcher)
    app[WEBHOOKS].outbox.changes = app[CHANGES].mark
    w.add(webhooks_state(app[WEBHOOKS]), archive=archive.restored)


def _v1(w: Wiring) -> None:
    app = w.app
    app[V1] = build_v1(
        app[SETTINGS],
        app[CLOCK],
        app[VENUE],
        probe=ChainDependencyProbe(app[CHAINS], app[FILL_INDEXERS], app[ACCESS].faults),
    )


def _ramp(w: Wiring) -> None:
    app, settings = w.app, w.app[SETTINGS]
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
    app[PROVIDER] = ProviderHolder()  # the sandbox, attached once the chains run
    w.add(ramp_state(app[RAMP]), timelines=app[RAMP].history)


AREAS = (
    Area("access", _access),
    Area("journal", _journal),
    Area("rfq", _rfq),
    Area("v1 book", _book),
    Area("feed", _feed),
    Area("swaps", _swaps),
    Area("webhooks", _webhooks),
    Area("v1", _v1),
    Area("ramp", _ramp),
)
