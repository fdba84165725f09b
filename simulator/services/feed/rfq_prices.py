"""The feed's prices for RFQ corridors: exactly what POST /v2/rfq/preview answers without
steering (the same trade validation, the same `IndicativePricing.preview` over the makers'
fresh published levels), and the RFQ area's live maker holds for the reserved-side rule."""

from __future__ import annotations

from simulator.errors import InvalidRequest
from simulator.services.feed.ports import Clearing, SideTrade
from simulator.services.rfq.ports import HoldLedger
from simulator.services.rfq.pricing import IndicativePricing
from simulator.services.rfq.trades import TradeRequest, validate_trade
from simulator.services.shared.venue import VenueDirectory


class RfqLevelPrices:
    def __init__(
        self, venue: VenueDirectory, pricing: IndicativePricing, inventory: HoldLedger
    ) -> None:
        self._venue = venue
        self._pricing = pricing
        self._inventory = inventory

    async def clearing(self, trade: SideTrade) -> Clearing | None:
        try:
            spec = validate_trade(
                self._venue,
                TradeRequest(
                    trade.leg.chain_id,
                    trade.sell.address,
                    trade.buy.address,
                    trade.sell_amount,
                    trade.buy_amount,
                ),
            )
        except InvalidRequest:
            return None  # below the chain's minimum, or not an RFQ corridor: nothing to fill
        price = self._pricing.preview(spec).price
        if price is None:
            return None
        return Clearing(sold=price.taker_pays, bought=price.buy_amount)

    async def reserved_since(self, trade: SideTrade) -> float | None:
        return await self._inventory.reserved_since(
            trade.leg.chain_id, trade.sell.address, trade.buy.address
        )
