"""The feed's state: the tape (every fill the indexers handed over, once per fill, and the
published trades of each market in time order: a `TradeArchive`, the history file in the app),
what the tickers decide on at once (window.py: each market's seconds with trades and its newest
trade) and the reserved-side fallback clocks. Only the last two are on the heap, bounded by the
window's seconds; they are what reset and snapshots save of the feed, the tape being restored
with the history file (one store per area, so reset and snapshots work store by store)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from simulator.services.feed.model import FillKey, Quote, TradeRecord
from simulator.services.feed.ports import TradeArchive
from simulator.services.feed.tape import MarketTape, MemoryTrades
from simulator.services.feed.window import TickerWindow
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import AsPairs, StateSchema

__all__ = ["FeedStore", "FeedStoreSaved", "FillKey", "MarketTape"]


@dataclass
class TapeFills:
    """The fills on the tape, as a sized container (tests and tools)."""

    archive: TradeArchive

    def __len__(self) -> int:
        return self.archive.count()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self.archive.has(key)


class FeedStore:
    def __init__(self, archive: TradeArchive | None = None) -> None:
        self.archive: TradeArchive = archive if archive is not None else MemoryTrades()
        self.windows: dict[str, TickerWindow] = {}  # by ticker id
        self.unlisted = 0  # fills of pairs no published corridor serves (kept, not published)
        # (ticker id, bid|ask) -> simulator time since which that side shows the newest cleared
        # price instead of 0 because a firm quote reserves it (the spec's 90 s bound).
        self.fallback_since: dict[tuple[str, Quote], float] = {}

    @property
    def fills(self) -> TapeFills:
        return TapeFills(self.archive)

    def has(self, key: FillKey) -> bool:
        return self.archive.has(key)

    def add(self, fill: Fill, trade: TradeRecord | None) -> bool:
        """Record a fill once; False when it was already on the tape (re-indexing)."""
        if self.archive.has(fill.key):
            return False
        self.archive.put(fill, trade)
        if trade is None:
            self.unlisted += 1
        else:
            self.windows.setdefault(trade.ticker_id, TickerWindow()).add(trade)
        return True

    def window(self, ticker_id: str) -> TickerWindow:
        return self.windows.get(ticker_id) or TickerWindow()

    def tape(self, ticker_id: str) -> MarketTape:
        """A market's whole tape, oldest first, read from the archive (tests and tools)."""
        tape = MarketTape()
        for trade in reversed(list(self.archive.newest_first(ticker_id, None, None, None))):
            tape.orders.append(trade.order)
            tape.trades.append(trade)
        return tape

    def forget(self, window_from: int, tape_from: int) -> None:
        """Seconds before `window_from` leave the windows, fills before `tape_from` the tape."""
        for window in self.windows.values():
            window.forget_before(window_from)
        self.archive.forget_before(tape_from)


class FeedStoreSaved(StateSchema):
    """What reset and snapshots put back of the feed's store besides the tape, which is in the
    history file and comes back with it (history_db.py `HistoryState`)."""

    windows: dict[str, TickerWindow]
    unlisted: int
    fallback_since: Annotated[dict[tuple[str, Quote], float], AsPairs()]
