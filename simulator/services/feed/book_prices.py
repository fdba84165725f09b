"""The feed's prices for BOOK corridors (spec 3: "v1-book corridors are priced by the book
matcher"): the book's executable resting offers for the side's taker, exactly those
GET /v1/order-book shows (checked live at a block no older than the request, in matching order,
held ones left out), taken whole in that order until they reach the reference size
(`book.reaching`). The price is that prefix's, fee included: what a swap of exactly its cost
clears at now. Nothing rests on a side: nothing is fillable. A firm RFQ quote
never reserves a BOOK side, so no side falls back to the last price."""

from __future__ import annotations

from simulator.errors import UpstreamError
from simulator.services.feed.ports import Clearing, SideTrade
from simulator.services.limit_orders.book import Composition, reaching
from simulator.services.limit_orders.ports import ChainUnreadable
from simulator.services.limit_orders.service import BookService


class BookOfferPrices:
    def __init__(self, book: BookService) -> None:
        self._book = book

    async def clearing(self, trade: SideTrade) -> Clearing | None:
        chain_id = trade.leg.chain_id
        try:
            view = await self._book.live.view(chain_id)
        except ChainUnreadable as exc:
            raise UpstreamError(
                f"The feed cannot be built: the v1 book of chain {chain_id} cannot be read",
                details={"reason": "chain_unreachable", "chainId": chain_id},
            ) from exc
        # The taker selling `sell` for `buy` meets the orders selling `buy` for `sell`.
        offers = self._book.ranked(view, trade.buy.address, trade.sell.address)
        taken = Composition(
            tuple(reaching(offers, cost=trade.sell_amount, proceeds=trade.buy_amount))
        )
        if not taken.orders:
            return None
        return Clearing(sold=taken.sold, bought=taken.proceeds)

    async def reserved_since(self, trade: SideTrade) -> float | None:
        return None
