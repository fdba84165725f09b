"""What the feed needs from the rest of the venue, as ports: the price a reference-size trade
clears at on one chain's corridor now, and whether a firm quote reserves a side. RFQ corridors
are served by the makers' published levels (rfq_prices.py), BOOK corridors by the v1 book's
matcher over its resting offers (book_prices.py); runtime/feed.py wires one per corridor mode.
And where the tape is kept (`TradeArchive`): the history file (adapters/store/trade_archive.py),
or memory for a feed built without one (tape.py `MemoryTrades`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from simulator.services.feed.model import FillKey, MarketLeg, Side, TradeRecord
from simulator.services.shared.fills import Fill
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

    async def reserved_since(self, trade: SideTrade) -> float | None:
        """The simulator time since which a live firm quote has reserved maker inventory on this
        side (the taker selling `trade.sell` for `trade.buy`), or None when nothing does."""
        ...


class TradeArchive(Protocol):
    """The tape: every fill the indexers handed over, once (published or not), and each
    market's published trades in tape order (timestamp, chain, block, log index)."""

    def has(self, key: FillKey) -> bool:
        """Whether this fill is on the tape (put before, and not forgotten)."""
        ...

    def count(self) -> int:
        """How many fills the tape holds (tests and tools: it may wait for the writer)."""
        ...

    def put(self, fill: Fill, trade: TradeRecord | None) -> None:
        """Record a fill not on the tape yet; `trade` is None for a pair no market serves."""
        ...

    def newest_first(
        self, ticker_id: str, side: Side | None, start_time: int | None, end_time: int | None
    ) -> Iterator[TradeRecord]:
        """The market's trades of `side` (None: both) from `end_time` back to `start_time`
        (inclusive Unix seconds, None: unbounded), newest first, read as they are consumed."""
        ...

    def forget_before(self, timestamp: int) -> None:
        """Forget every fill whose block is older than `timestamp` (Unix seconds)."""
        ...

    def save(self) -> None:
        """Hand what was put and not yet handed to where it is kept (before a snapshot)."""
        ...
