"""What the feed needs from the rest of the venue, as ports: the price a reference-size trade
clears at on one chain's corridor now, and whether a firm quote reserves a side. RFQ corridors
are served by the makers' published levels (rfq_prices.py), BOOK corridors by the v1 book's
matcher over its resting offers (book_prices.py); runtime/feed.py wires one per corridor mode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from simulator.services.feed.model import MarketLeg
from simulator.services.shared.venue import VenueToken


@dataclass(frozen=True)
class Clearing:
    """What a taker's trade clears at, net of fees: what leaves the taker's wallet (fee
    included) and what reaches it, in atomic units."""

    sold: int  # of the token the taker sells
    bought: int  # of the token the taker buys


@dataclass(frozen=True)
class SideTrade:
    """The trade one side of a ticker is priced by: exactly one of `sell_amount` (exact input,
    fee-inclusive) and `buy_amount` (exact output) is set."""

    leg: MarketLeg
    sell: VenueToken  # what the taker sells
    buy: VenueToken  # what the taker buys
    sell_amount: int | None
    buy_amount: int | None


class CorridorPrices(Protocol):
    """Prices a reference-size trade on one chain's corridor as the venue would clear it now."""

    async def clearing(self, trade: SideTrade) -> Clearing | None:
        """None when nothing is fillable at that size on that side. Raises UpstreamError
        when what it prices from cannot be read now (the feed answers 502)."""
        ...

    def reserved_since(self, trade: SideTrade) -> float | None:
        """The simulator time since which a live firm quote has reserved maker inventory on this
        side (the taker selling `trade.sell` for `trade.buy`), or None when nothing does."""
        ...
