"""The feed's state: the tape (every fill the indexers handed over, once per fill, and the
published trades of each market in time order) and the reserved-side fallback clocks. Plain
in-memory state owned by the feed service (one store per area, so reset and snapshots work
store by store)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Annotated

from simulator.services.feed.model import Quote, TradeRecord
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import AsPairs, StateSchema

FillKey = tuple[int, str, int]  # (chain id, tx hash, log index)


@dataclass
class MarketTape:
    """One market's trades, oldest first, ordered by (timestamp, chain, block, log index)."""

    orders: list[tuple[int, int, int, int]] = field(default_factory=list)  # sort keys
    trades: list[TradeRecord] = field(default_factory=list)  # parallel to `orders`

    def insert(self, trade: TradeRecord) -> None:
        # Fills arrive in chain order, so this is an append almost always; a late-indexed chain
        # (its index was paused) still lands in time order.
        at = bisect.bisect_right(self.orders, trade.order)
        self.orders.insert(at, trade.order)
        self.trades.insert(at, trade)

    def index_at_or_after(self, timestamp: int) -> int:
        """Position of the first trade at or after `timestamp`."""
        return bisect.bisect_left(self.orders, (timestamp,))

    def index_after(self, timestamp: int) -> int:
        """Position of the first trade after `timestamp` (whole seconds)."""
        return bisect.bisect_left(self.orders, (timestamp + 1,))

    @property
    def newest(self) -> TradeRecord | None:
        return self.trades[-1] if self.trades else None


@dataclass
class FeedStore:
    fills: dict[FillKey, Fill] = field(default_factory=dict)  # the tape: every fill, once
    markets: dict[str, MarketTape] = field(default_factory=dict)  # published trades by ticker
    unlisted: int = 0  # fills of pairs no published corridor serves (kept, not published)
    # (ticker id, bid|ask) -> simulator time since which that side shows the newest cleared
    # price instead of 0 because a firm quote reserves it (the spec's 90 s bound).
    fallback_since: dict[tuple[str, Quote], float] = field(default_factory=dict)

    def has(self, key: FillKey) -> bool:
        return key in self.fills

    def add(self, fill: Fill, trade: TradeRecord | None) -> bool:
        """Record a fill once; False when it was already on the tape (re-indexing)."""
        if fill.key in self.fills:
            return False
        self.fills[fill.key] = fill
        if trade is None:
            self.unlisted += 1
        else:
            self.markets.setdefault(trade.ticker_id, MarketTape()).insert(trade)
        return True

    def tape(self, ticker_id: str) -> MarketTape:
        return self.markets.get(ticker_id) or MarketTape()


class FeedStoreSaved(StateSchema):
    """What reset and snapshots put back of the feed's store: all of it."""

    fills: Annotated[dict[FillKey, Fill], AsPairs()]
    markets: dict[str, MarketTape]
    unlisted: int
    fallback_since: Annotated[dict[tuple[str, Quote], float], AsPairs()]
