"""What the tickers decide on at once, kept in memory per market: the figures of each second
that had trades (volumes, high, low, the second's last price) and the market's newest trade at
any age. A ticker's window is a run of seconds, so it costs at most `window_s` entries per
market however many trades a second holds; the trades themselves are on the tape (ports.py
`TradeArchive`), which no ticker reads (decisions RF22)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from decimal import Decimal

from simulator.services.feed.model import EXACT, TradeRecord


@dataclass
class SecondFigures:
    second: int  # Unix seconds
    base_volume: Decimal
    target_volume: Decimal
    high: Decimal
    low: Decimal
    last_order: tuple[int, int, int, int]  # tape order of the second's last trade
    last_price: Decimal

    def add(self, trade: TradeRecord) -> None:
        self.base_volume = EXACT.add(self.base_volume, trade.base_volume)
        self.target_volume = EXACT.add(self.target_volume, trade.target_volume)
        self.high = max(self.high, trade.price)
        self.low = min(self.low, trade.price)
        if trade.order > self.last_order:  # a late-indexed chain lands in its place
            self.last_order, self.last_price = trade.order, trade.price


@dataclass
class TickerWindow:
    """One market's seconds with trades, oldest first, and its newest trade."""

    seconds: list[SecondFigures] = field(default_factory=list)
    newest: TradeRecord | None = None

    def _at(self, second: int) -> int:
        return bisect.bisect_left(self.seconds, second, key=lambda s: s.second)

    def add(self, trade: TradeRecord) -> None:
        at = self._at(trade.timestamp)
        if at < len(self.seconds) and self.seconds[at].second == trade.timestamp:
            self.seconds[at].add(trade)
        else:
            figures = SecondFigures(
                trade.timestamp,
                trade.base_volume,
                trade.target_volume,
                trade.price,
                trade.price,
                trade.order,
                trade.price,
            )
            self.seconds.insert(at, figures)  # an append unless a chain was indexed late
        if self.newest is None or trade.order > self.newest.order:
            self.newest = trade

    def since(self, second: int) -> list[SecondFigures]:
        """The seconds at or after `second`, oldest first."""
        return self.seconds[self._at(second) :]

    def forget_before(self, second: int) -> None:
        """Seconds no window can reach any more (the clock only moves forward; a restore
        puts the windows back with it)."""
        del self.seconds[: self._at(second)]
