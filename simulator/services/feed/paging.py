"""Paging of /historical_trades (spec 3 "GET /historical_trades"): newest first, `limit` per
side, a page never splits a second (so it may exceed `limit`), and buy and sell share one
cutoff second (so a side may come back shorter than `limit`, or empty).

The page is every trade (of the requested sides) from `end_time` back to the cutoff second,
both included: seconds are taken whole, newest first, as long as neither side goes over
`limit`; the first second is always taken, however many trades it holds. So paging back with
`end_time` = the page's oldest `trade_timestamp` - 1 until a page is empty returns every trade
exactly once: nothing at or after the cutoff is left out, nothing before it is included."""

from __future__ import annotations

from simulator.services.feed.model import TradePage, TradeQuery, TradeRecord
from simulator.services.feed.store import MarketTape

DEFAULT_LIMIT = 200
MAX_LIMIT = 1000


def clamp_limit(limit: int | None) -> int:
    """Default 200; above 1000 clamped to 1000. (0 and negative are refused at the edge.)"""
    if limit is None:
        return DEFAULT_LIMIT
    return min(limit, MAX_LIMIT)


def page(tape: MarketTape, query: TradeQuery) -> TradePage:
    low = 0 if query.start_time is None else tape.index_at_or_after(query.start_time)
    high = len(tape.trades) if query.end_time is None else tape.index_after(query.end_time)
    trades = tape.trades
    taken: dict[str, list[TradeRecord]] = {"buy": [], "sell": []}
    at = high - 1
    while at >= low:
        second = trades[at].timestamp
        block: dict[str, list[TradeRecord]] = {"buy": [], "sell": []}
        while at >= low and trades[at].timestamp == second:
            trade = trades[at]
            if query.side is None or trade.side == query.side:
                block[trade.side].append(trade)
            at -= 1
        if not block["buy"] and not block["sell"]:
            continue  # nothing of the requested side in this second
        empty = not taken["buy"] and not taken["sell"]
        over = any(len(taken[s]) + len(block[s]) > query.limit for s in ("buy", "sell"))
        if over and not empty:
            break  # the cutoff: this second starts the next page
        taken["buy"] += block["buy"]
        taken["sell"] += block["sell"]
        if over:
            break  # a first second holding more than `limit` is the whole page
    return TradePage(buy=taken["buy"], sell=taken["sell"])
