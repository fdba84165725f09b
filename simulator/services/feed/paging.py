"""Paging of /historical_trades (spec 3 "GET /historical_trades"): newest first, `limit` per
side, a page never splits a second (so it may exceed `limit`), and buy and sell share one
cutoff second (so a side may come back shorter than `limit`, or empty).

The page is every trade (of the requested sides) from `end_time` back to the cutoff second,
both included: seconds are taken whole, newest first, as long as neither side goes over
`limit`; the first second is always taken, however many trades it holds. So paging back with
`end_time` = the page's oldest `trade_timestamp` - 1 until a page is empty returns every trade
exactly once: nothing at or after the cutoff is left out, nothing before it is included."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from simulator.services.feed.model import TradePage, TradeRecord

DEFAULT_LIMIT = 200
MAX_LIMIT = 1000


def clamp_limit(limit: int | None) -> int:
    """Default 200; above 1000 clamped to 1000. (0 and negative are refused at the edge.)"""
    if limit is None:
        return DEFAULT_LIMIT
    return min(limit, MAX_LIMIT)


def page(newest: Iterable[TradeRecord], limit: int) -> TradePage:
    """`newest`: the trades of the requested sides between the bounds, newest first (read
    only as far as the page needs, so a page from the history file is an index range)."""
    taken: dict[str, list[TradeRecord]] = {"buy": [], "sell": []}
    for _, second in itertools.groupby(newest, key=lambda trade: trade.timestamp):
        block: dict[str, list[TradeRecord]] = {"buy": [], "sell": []}
        for trade in second:
            block[trade.side].append(trade)
        empty = not taken["buy"] and not taken["sell"]
        over = any(len(taken[s]) + len(block[s]) > limit for s in ("buy", "sell"))
        if over and not empty:
            break  # the cutoff: this second starts the next page
        taken["buy"] += block["buy"]
        taken["sell"] += block["sell"]
        if over:
            break  # a first second holding more than `limit` is the whole page
    return TradePage(buy=taken["buy"], sell=taken["sell"])
