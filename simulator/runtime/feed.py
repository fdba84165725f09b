"""The rates feed's wiring: `build_feed` subscribes the feed's tape to every fill the indexers
hand over (kept where `trades` keeps it: the history file in the app) and prices corridors
through `corridor_prices`: RFQ corridors from the RFQ area's levels and holds, BOOK corridors
from the v1 book's resting offers (`BookOfferPrices`)."""

from __future__ import annotations

from typing import Any

from simulator.clock import Clock
from simulator.services.feed.area import FeedArea
from simulator.services.feed.book_prices import BookOfferPrices
from simulator.services.feed.ports import CorridorPrices, TradeArchive
from simulator.services.feed.rfq_prices import RfqLevelPrices
from simulator.services.feed.service import FeedService
from simulator.services.feed.store import FeedStore, FeedStoreSaved
from simulator.services.limit_orders.area import BookArea
from simulator.services.rfq.area import RfqArea
from simulator.services.shared.fills import FillFanout, IndexProgress
from simulator.services.shared.state import SavedAttributes, StateParticipant
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import CorridorMode, Settings


def build_feed(
    settings: Settings,
    clock: Clock,
    venue: VenueDirectory,
    *,
    prices: dict[CorridorMode, CorridorPrices],
    fills: FillFanout,
    index: IndexProgress,
    trades: TradeArchive | None = None,
) -> FeedArea:
    """The feed on its ports: each corridor mode's prices (`corridor_prices`), the fills the
    indexers hand over, how far each chain's index has come, and where the tape is kept
    (None: in memory, for a feed built on its own)."""
    service = FeedService(clock, settings.feed, venue, FeedStore(trades), prices, index)
    fills.subscribe(service.on_fill)
    return FeedArea(service=service)


def corridor_prices(
    venue: VenueDirectory, rfq: RfqArea, book: BookArea
) -> dict[CorridorMode, CorridorPrices]:
    """RFQ corridors priced from the makers' levels and holds, BOOK corridors from the book's
    resting offers (its matcher)."""
    return {
        "RFQ": RfqLevelPrices(venue, rfq.deps.pricing, rfq.deps.inventory),
        "BOOK": BookOfferPrices(book.service),
    }


class FeedStoreState(SavedAttributes[FeedStoreSaved]):
    """The feed's store in memory (its windows); before it is dumped, the fills put since the
    last hand-over go to the tape, so the history file's copy, dumped after it, holds them."""

    def __init__(self, store: FeedStore) -> None:
        super().__init__("feed.store", store, FeedStoreSaved)
        self._store = store

    def dump(self) -> dict[str, Any]:
        self._store.archive.save()
        return super().dump()


def feed_state(area: FeedArea) -> list[StateParticipant]:
    """Registered before the history file (history_db.py `HistoryState`), which restores the
    tape itself."""
    return [FeedStoreState(area.service.store)]
