"""The rates feed's wiring: `build_feed` prices RFQ corridors from the RFQ area's levels and
holds, BOOK corridors from the v1 book's resting offers (its matcher, `BookOfferPrices`), and
subscribes the feed's tape to every fill the indexers hand over."""

from __future__ import annotations

from simulator.clock import Clock
from simulator.services.feed.area import FeedArea
from simulator.services.feed.book_prices import BookOfferPrices
from simulator.services.feed.ports import CorridorPrices
from simulator.services.feed.rfq_prices import RfqLevelPrices
from simulator.services.feed.service import FeedService
from simulator.services.feed.store import FeedStore
from simulator.services.limit_orders.area import BookArea
from simulator.services.rfq.area import RfqArea
from simulator.services.shared.fills import FillFanout, IndexProgress
from simulator.services.shared.state import AttributeState, StateParticipant
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import CorridorMode, Settings


def build_feed(
    settings: Settings,
    clock: Clock,
    venue: VenueDirectory,
    rfq: RfqArea,
    book: BookArea,
    fills: FillFanout,
    index: IndexProgress,
) -> FeedArea:
    prices: dict[CorridorMode, CorridorPrices] = {
        "RFQ": RfqLevelPrices(venue, rfq.pricing, rfq.inventory),
        "BOOK": BookOfferPrices(book.service),
    }
    service = FeedService(clock, settings.feed, venue, FeedStore(), prices, index)
    fills.subscribe(service.on_fill)
    return FeedArea(service=service)


def feed_state(area: FeedArea) -> list[StateParticipant]:
    return [AttributeState.of("feed.store", area.service.store)]
