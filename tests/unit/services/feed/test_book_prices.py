"""The feed's prices for a BOOK corridor (services/feed/book_prices.py) over the real book
service and a fake chain behind the book's ports: the side's taker meets the book's executable
offers (live, funded, not held) in matching order, taken whole until they reach 100 units of
the stable side; the price is exactly what a swap of that cost composes and clears at; an empty
side is nothing fillable, a chain that cannot be read is the feed's 502, and no firm quote ever
reserves a BOOK side. Then the ticker the feed publishes from it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from simulator.errors import UpstreamError
from simulator.services.feed.book_prices import BookOfferPrices
from simulator.services.feed.model import MarketLeg, price_of, units
from simulator.services.feed.ports import Clearing, SideTrade
from simulator.services.feed.service import FeedService
from simulator.services.feed.store import FeedStore
from simulator.services.shared.fills import IndexProgress
from simulator.settings import FeedSettings
from tests.unit.services.limit_orders.factory import CHAIN_ID
from tests.unit.services.limit_orders.harness import (
    MAKER_KEYS,
    NGNS_T,
    USDC_T,
    build,
    caller,
    place,
    venue,
)
from tests.unit.services.swaps.swap_requests import swap_request

E6 = 10**6
FEE_BPS = 5


def leg() -> MarketLeg:
    chain = venue().chain(CHAIN_ID)
    assert chain is not None
    corridor = next(c for c in chain.corridors if c.timing.mode == "BOOK")
    return MarketLeg(CHAIN_ID, corridor, USDC_T, NGNS_T, USDC_T)  # USDC_NGN, sized in USDC


def bid() -> SideTrade:
    """The taker sells exactly 100 USDC for NGNS."""
    return SideTrade(leg(), USDC_T, NGNS_T, 100 * E6, None)


def ask() -> SideTrade:
    """The taker buys exactly 100 USDC with NGNS."""
    return SideTrade(leg(), NGNS_T, USDC_T, None, 100 * E6)


def with_fee(amount: int) -> int:
    return amount + amount * FEE_BPS // 10_000


async def test_a_side_is_priced_by_whole_offers_in_matching_order_up_to_the_size() -> None:
    h = build()
    # Makers selling NGNS for USDC (what a taker selling USDC meets), best rate first: 1600,
    # then 1590 NGNS per USDC; the worst is never reached.
    await place(h, sell_amount=1590 * 50 * E6, buy_amount=50 * E6, maker=1)
    await place(h, sell_amount=1600 * 60 * E6, buy_amount=60 * E6, maker=0)
    await place(h, sell_amount=1500 * 10 * E6, buy_amount=10 * E6, maker=2)
    prices = BookOfferPrices(h.book)
    clearing = await prices.clearing(bid())
    # 60 USDC do not reach 100: the 50 USDC order is taken whole too.
    assert clearing == Clearing(sold=with_fee(60 * E6) + with_fee(50 * E6), bought=175_500 * E6)
    # Exactly what the matcher composes for a swap of that cost (GET /v1/quote, POST /v1/swaps).
    quote = await h.swaps.quote(caller(), swap_request(clearing.sold, taker=None))
    assert (quote.sold_amount, quote.buy_amount) == (
        clearing.sold,
        clearing.bought,
    )
    # The other side: makers selling USDC for NGNS, sized on what the taker receives.
    await place(h, sell=USDC_T, buy=NGNS_T, sell_amount=70 * E6, buy_amount=1630 * 70 * E6, maker=0)
    await place(h, sell=USDC_T, buy=NGNS_T, sell_amount=70 * E6, buy_amount=1620 * 70 * E6, maker=1)
    clearing = await prices.clearing(ask())
    assert clearing == Clearing(
        sold=with_fee(1620 * 70 * E6) + with_fee(1630 * 70 * E6), bought=140 * E6
    )
    assert await prices.reserved_since(bid()) is None, "no firm RFQ quote reserves a BOOK side"


async def test_only_offers_the_book_would_execute_price_a_side() -> None:
    h = build()
    prices = BookOfferPrices(h.book)
    assert await prices.clearing(bid()) is None, "nothing rests: nothing fillable"
    held = await place(h, sell_amount=1600 * 100 * E6, buy_amount=100 * E6, maker=0)
    await place(h, sell_amount=1590 * 100 * E6, buy_amount=100 * E6, maker=1)
    first = await prices.clearing(bid())
    assert first == Clearing(sold=with_fee(100 * E6), bought=160_000 * E6)
    # A built swap holds the best order: the side is priced from the next one.
    record = await h.swaps.create(caller(), swap_request(with_fee(100 * E6)))
    assert [o.order_id for o in record.orders] == [held]  # type: ignore[union-attr]
    assert await prices.clearing(bid()) == Clearing(sold=with_fee(100 * E6), bought=159_000 * E6)
    # Its maker spends its funds: nothing left to offer.
    h.chain.fund(NGNS_T.address, MAKER_KEYS[1].address, 0)
    assert await prices.clearing(bid()) is None


async def test_a_chain_that_cannot_be_read_is_the_feeds_502() -> None:
    h = build()
    h.chain.down = True
    with pytest.raises(UpstreamError, match="v1 book of chain 97 cannot be read"):
        await BookOfferPrices(h.book).clearing(bid())


class NoQuotes:
    """RFQ corridors priced at nothing: this test is about the BOOK corridor."""

    async def clearing(self, trade: SideTrade) -> Clearing | None:
        return None

    async def reserved_since(self, trade: SideTrade) -> float | None:
        return None


async def test_the_ticker_of_a_book_corridor_shows_its_offers() -> None:
    h = build()
    await place(h, sell_amount=1600 * 100 * E6, buy_amount=100 * E6, maker=0)
    await place(
        h, sell=USDC_T, buy=NGNS_T, sell_amount=100 * E6, buy_amount=1620 * 100 * E6, maker=1
    )
    index = IndexProgress()
    index.mark(CHAIN_ID, "current", h.clock.monotonic())
    feed = FeedService(
        h.clock,
        FeedSettings(),
        venue(),
        FeedStore(),
        {"RFQ": NoQuotes(), "BOOK": BookOfferPrices(h.book)},
        index,
    )
    (ticker,) = await feed.tickers(ticker_id="USDC_NGN", base=None, target=None)
    # Net of fees: 100.05 USDC buy 160,000 NGN; 100 USDC cost 162,000 NGN plus 5 bp.
    assert ticker.bid == price_of(units(160_000 * E6, 6), units(with_fee(100 * E6), 6))
    assert ticker.ask == Decimal("1620.81")
