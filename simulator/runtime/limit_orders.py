"""The v1 book's wiring: `build_book` (the limit-order services over the chain reads, the fill
index and the online makers' bids) and its background work, the 5-minute sweep, which runs
once the chains are up and is cancelled and awaited on shutdown."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.tasks import running, step_forever
from simulator.api.http.appkeys import BOOK, CLOCK, SETTINGS
from simulator.api.limit_orders.events import limit_order_events
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.timelines import timelines
from simulator.services.access.ports import SignatureChecker
from simulator.services.limit_orders.area import BookArea
from simulator.services.limit_orders.history import LIMIT_ORDER_STEPS
from simulator.services.limit_orders.jobs import BookSweep
from simulator.services.limit_orders.live import LiveBook
from simulator.services.limit_orders.placement import Placement
from simulator.services.limit_orders.ports import BookChainReader, FillCatchUp, FillerBids
from simulator.services.limit_orders.service import BookService
from simulator.services.limit_orders.store import BookStore, BookStoreSaved
from simulator.services.rfq.ports import MakerChainReader
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.events import EventLog, EventLogSaved
from simulator.services.shared.state import SavedAttributes, StateParticipant
from simulator.services.shared.timelines import EventSteps, TimelineState
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import Settings

log = logging.getLogger("rfqsim.book")


def build_book(
    settings: Settings,
    clock: Clock,
    random: RandomSource,
    venue: VenueDirectory,
    *,
    reads: BookChainReader,
    funding: MakerChainReader,
    signatures: SignatureChecker,
    bids: FillerBids,
    fills: FillCatchUp,
    changes: ChangeFeed | None = None,
) -> BookArea:
    """The book on its ports: the chain reads of the book and of a maker's funding, the
    signature check of contract wallets, the filling operators' bids (the RFQ area's registry)
    and the fill index's catch-up."""
    store = BookStore()
    history = timelines("limit-orders", LIMIT_ORDER_STEPS, clock, settings, changes)
    events = EventLog()
    placement = Placement(
        clock,
        random.fork("limit-orders"),
        venue,
        store,
        funding,
        signatures,
        settings.book,
        history,
    )
    service = BookService(
        clock,
        venue,
        store,
        LiveBook(clock, store, venue, reads, fills, history),
        placement,
        reads,
        fills,
        bids,
        limit_order_events(events),
        history,
    )
    sweep = BookSweep(clock, venue, service, limit_order_events(events), settings.book)
    events.subscribers.append(EventSteps(history))
    return BookArea(service=service, sweep=sweep, events=events, history=history)


def book_state(area: BookArea) -> list[StateParticipant]:
    """The book's state: every order, the swaps' holds, the sweep's progress, the event log.
    What the book cached from the chains is dropped when it is put back."""
    return [
        SavedAttributes(
            "book.store", area.service.store, BookStoreSaved, after_load=area.service.state_restored
        ),
        SavedAttributes("book.events", area.events, EventLogSaved),
        TimelineState("book.timelines", area.history),
    ]


async def book_context(app: web.Application) -> AsyncIterator[None]:
    sweep = app[BOOK].sweep
    periodic = step_forever(
        app[CLOCK],
        sweep.sweep,
        sweep.next_due,
        max_sleep_s=app[SETTINGS].book.sweep_interval_s,
        log=log,
        what="limit-order sweep",
    )
    async with running(periodic, name="book-sweep"):
        yield
