"""The tape in memory (ports.py `TradeArchive`), for a feed built without a history file (a
`FeedService` on its own, as the unit tests build it): each market's trades in a sorted list.
The app keeps its tape in the history file (adapters/store/trade_archive.py), which snapshots
copy; this one is not part of any saved state."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

from simulator.services.feed.model import FillKey, Side, TradeRecord
from simulator.services.shared.fills import Fill


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


class MemoryTrades:
    def __init__(self) -> None:
        self._fills: dict[FillKey, int] = {}  # every fill, once -> its block's timestamp
        self._markets: dict[str, MarketTape] = {}

    def has(self, key: FillKey) -> bool:
        return key in self._fills

    def count(self) -> int:
        return len(self._fills)

    def put(self, fill: Fill, trade: TradeRecord | None) -> None:
        self._fills[fill.key] = int(fill.block_time)
        if trade is not None:
            self._markets.setdefault(trade.ticker_id, MarketTape()).insert(trade)

    def newest_first(
        self, ticker_id: str, side: Side | None, start_time: int | None, end_time: int | None
    ) -> Iterator[TradeRecord]:
        tape = self._markets.get(ticker_id) or MarketTape()
        low = 0 if start_time is None else tape.index_at_or_after(start_time)
        high = len(tape.trades) if end_time is None else tape.index_after(end_time)
        for at in range(high - 1, low - 1, -1):
            trade = tape.trades[at]
            if side is None or trade.side == side:
                yield trade

    def forget_before(self, timestamp: int) -> None:
        self._fills = {k: t for k, t in self._fills.items() if t >= timestamp}
        for tape in self._markets.values():
            first = tape.index_at_or_after(timestamp)
            del tape.orders[:first], tape.trades[:first]

    def save(self) -> None:
        return  # nothing to hand over: memory is where it is kept
