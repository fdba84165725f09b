"""Tickers: bid and ask price a trade of 100 units of the stable side net of fees (the best of
the market's chains; RFQ and BOOK corridors each through their own port), a side a firm quote
reserves shows the newest cleared price for at most 90 s instead of 0, last/high/low/volumes
cover the last 24 h of the simulator clock (so advancing it ages trades out), and the reference
when nothing traded. Plus selection errors and the 502 of a fill index that is not current."""

from __future__ import annotations

import pytest

from simulator.errors import InvalidRequest, NotFound, UpstreamError
from simulator.services.feed.model import TickerFigures, decimal_string
from simulator.services.feed.ports import Clearing
from tests.unit.services.feed.harness import NGNS, T0, USDT, Harness

DAY = 86_400


async def ticker(h: Harness, ticker_id: str = "USDT_NGN") -> dict[str, str]:
    (found,) = await h.feed.tickers(ticker_id=ticker_id, base=None, target=None)
    return render(found)


def render(t: TickerFigures) -> dict[str, str]:
    fields = ("last_price", "bid", "ask", "high", "low", "base_volume", "target_volume")
    return {name: decimal_string(getattr(t, name)) for name in fields}


def quote_usdt_ngn(h: Harness, chain_id: int, bid: int, ask: int) -> None:
    """Makers on `chain_id` clear 100 USDT at `bid` NGN each (taker sells) and `ask` (buys)."""
    h.prices.clearings[(chain_id, "USDT", "NGNS")] = Clearing(100 * 10**18, bid * 100 * 10**6)
    h.prices.clearings[(chain_id, "NGNS", "USDT")] = Clearing(ask * 100 * 10**6, 100 * 10**18)


async def sell_usdt(h: Harness, usdt: int, ngns: int, at: float | None = None) -> None:
    await h.add(
        h.fill(gave=NGNS, gave_amount=ngns * 10**6, got=USDT, got_amount=usdt * 10**18, at=at)
    )


async def test_bid_and_ask_price_100_stable_units_on_the_best_chain() -> None:
    h = Harness()
    quote_usdt_ngn(h, 56, bid=1598, ask=1602)
    quote_usdt_ngn(h, 97, bid=1599, ask=1603)
    t = await ticker(h)
    assert (t["bid"], t["ask"]) == ("1599", "1602"), "highest bid, lowest ask across chains"
    sizes = {
        (a.leg.chain_id, a.sell.symbol, a.buy.symbol): (a.sell_amount, a.buy_amount)
        for a in h.prices.asked
    }
    # Fiat corridor: 100 USDT (the base) exact in on the bid, exact out on the ask.
    assert sizes[(97, "USDT", "NGNS")] == (100 * 10**18, None)
    assert sizes[(97, "NGNS", "USDT")] == (None, 100 * 10**18)


async def test_an_asset_corridor_is_sized_in_its_stable_target() -> None:
    h = Harness()
    # Selling WBNB for exactly 100 USDT takes 0.1666... WBNB; 100 USDT buys 0.16 WBNB.
    h.prices.clearings[(97, "WBNB", "USDT")] = Clearing(166_666_666_666_666_667, 100 * 10**18)
    h.prices.clearings[(97, "USDT", "WBNB")] = Clearing(100 * 10**18, 16 * 10**16)
    t = await ticker(h, "WBNB_USDT")
    assert t["bid"] == "599.9999999999999988"  # 100 / 0.166666666666666667, to 18 places
    assert t["ask"] == "625"
    sizes = {(a.sell.symbol, a.buy.symbol): (a.sell_amount, a.buy_amount) for a in h.prices.asked}
    assert sizes[("WBNB", "USDT")] == (None, 100 * 10**18)
    assert sizes[("USDT", "WBNB")] == (100 * 10**18, None)


async def test_a_book_corridor_is_priced_through_the_books_port_only() -> None:
    h = Harness()
    # The book's offers clear 100 USDC at 1590 NGN each on chain 97 and 1585 on 56 (taker
    # sells), and 100 USDC cost 1612 NGN each on 97 (taker buys); chain 56 has no ask.
    h.book.clearings[(97, "USDC", "NGNS")] = Clearing(100 * 10**6, 1590 * 100 * 10**6)
    h.book.clearings[(56, "USDC", "NGNS")] = Clearing(100 * 10**6, 1585 * 100 * 10**6)
    h.book.clearings[(97, "NGNS", "USDC")] = Clearing(1612 * 100 * 10**6, 100 * 10**6)
    t = await ticker(h, "USDC_NGN")
    assert (t["bid"], t["ask"], t["last_price"]) == ("1590", "1612", "1601")
    asked = {(a.leg.chain_id, a.sell.symbol, a.buy.symbol) for a in h.book.asked}
    assert asked == {(c, s, b) for c in (56, 97) for s, b in (("USDC", "NGNS"), ("NGNS", "USDC"))}
    sizes = {(a.sell.symbol, a.buy.symbol): (a.sell_amount, a.buy_amount) for a in h.book.asked}
    assert sizes == {("USDC", "NGNS"): (100 * 10**6, None), ("NGNS", "USDC"): (None, 100 * 10**6)}
    assert not any(a.leg.mode == "BOOK" for a in h.prices.asked), "the RFQ port never asked"
    assert not any(a.leg.mode == "RFQ" for a in h.book.asked)
    # An empty book: nothing fillable on either side, and no reservation to fall back on.
    h.book.clearings.clear()
    assert (await ticker(h, "USDC_NGN"))["bid"] == "0"


async def test_last_high_low_and_volumes_cover_the_last_24_hours_of_the_clock() -> None:
    h = Harness()
    quote_usdt_ngn(h, 97, bid=1590, ask=1610)
    await sell_usdt(h, 10, 16_000, at=T0 - 10)
    await sell_usdt(h, 1, 1_650, at=T0 - 5)
    await sell_usdt(h, 2, 3_100, at=T0)
    t = await ticker(h)
    assert t == {
        "last_price": "1550",
        "bid": "1590",
        "ask": "1610",
        "high": "1650",
        "low": "1550",
        "base_volume": "13",
        "target_volume": "20750",
    }
    h.clock.at = T0 - 10 + DAY  # the oldest trade is exactly 24 h old: still in
    assert (await ticker(h))["base_volume"] == "13"
    h.clock.at = T0 - 10 + DAY + 0.5  # half a second more: out
    assert ((await ticker(h))["base_volume"], (await ticker(h))["high"]) == ("3", "1650")
    h.clock.at = T0 + DAY + 1  # all out: the reference (mid of bid and ask) everywhere
    assert await ticker(h) == {
        "last_price": "1600",
        "bid": "1590",
        "ask": "1610",
        "high": "1600",
        "low": "1600",
        "base_volume": "0",
        "target_volume": "0",
    }


async def test_the_reference_without_trades_in_the_window() -> None:
    h = Harness()
    assert (await ticker(h))["last_price"] == "0", "no quote, no trade ever"
    await sell_usdt(h, 1, 1_580, at=T0 - 2 * DAY)
    assert (await ticker(h))["last_price"] == "1580", "the market's last price, however old"
    h.prices.clearings[(97, "USDT", "NGNS")] = Clearing(100 * 10**18, 1_595 * 100 * 10**6)
    assert (await ticker(h))["last_price"] == "1595", "the side that quotes"
    quote_usdt_ngn(h, 97, bid=1595, ask=1606)
    assert (await ticker(h))["last_price"] == "1600.5", "both sides: their midpoint"


async def test_a_reserved_side_shows_the_newest_cleared_price_for_at_most_90_s() -> None:
    h = Harness()
    quote_usdt_ngn(h, 97, bid=1590, ask=1610)
    await sell_usdt(h, 1, 1_588, at=T0 - 3)
    await sell_usdt(h, 1, 1_587, at=T0 - 1)
    assert (await ticker(h))["bid"] == "1590"
    # A firm quote takes the makers' USDT->NGNS depth: the bid has nothing fillable.
    del h.prices.clearings[(97, "USDT", "NGNS")]
    h.prices.reserved[(97, "USDT", "NGNS")] = T0
    assert (await ticker(h))["bid"] == "1587", "the newest cleared price instead of 0"
    assert (await ticker(h))["ask"] == "1610", "the other side is untouched"
    h.clock.at = T0 + 90
    assert (await ticker(h))["bid"] == "1587"
    # Quotes keep the side reserved without a break: after 90 s it reads 0 all the same.
    h.prices.reserved[(97, "USDT", "NGNS")] = T0 + 50
    h.clock.at = T0 + 91
    assert (await ticker(h))["bid"] == "0"
    # The reservation ends: 0 (no maker quotes); a new one starts a new 90 s.
    del h.prices.reserved[(97, "USDT", "NGNS")]
    assert (await ticker(h))["bid"] == "0"
    h.prices.reserved[(97, "USDT", "NGNS")] = T0 + 95
    h.clock.at = T0 + 100
    assert (await ticker(h))["bid"] == "1587"
    # Liquidity back: the live price again.
    quote_usdt_ngn(h, 97, bid=1591, ask=1610)
    assert (await ticker(h))["bid"] == "1591"


async def test_a_reserved_side_without_any_trade_reads_0() -> None:
    h = Harness()
    h.prices.reserved[(97, "NGNS", "USDT")] = T0
    assert (await ticker(h))["ask"] == "0"


async def test_selection_by_ticker_base_and_target() -> None:
    h = Harness()
    everything = await h.feed.tickers(ticker_id=None, base=None, target=None)
    assert [t.market.ticker_id for t in everything] == [
        "USDT_NGN",
        "USDC_USDT",
        "WBNB_USDT",
        "USDC_NGN",
    ]
    by_base = await h.feed.tickers(ticker_id=None, base="USDC", target=None)
    assert [t.market.ticker_id for t in by_base] == ["USDC_USDT", "USDC_NGN"]
    by_target = await h.feed.tickers(ticker_id=None, base=None, target="NGN")
    assert [t.market.ticker_id for t in by_target] == ["USDT_NGN", "USDC_NGN"]
    pinned = await h.feed.tickers(ticker_id=None, base="USDC", target="NGN")
    assert [t.market.ticker_id for t in pinned] == ["USDC_NGN"]
    with pytest.raises(NotFound):
        await h.feed.tickers(ticker_id="NGN_USDT", base=None, target=None)
    with pytest.raises(NotFound):
        await h.feed.tickers(ticker_id=None, base="NGNS", target=None)
    with pytest.raises(NotFound):
        await h.feed.tickers(ticker_id=None, base="NGN", target="USDT")
    with pytest.raises(InvalidRequest):
        await h.feed.tickers(ticker_id="USDT_NGN", base="USDC", target=None)
    with pytest.raises(InvalidRequest):
        h.trades(ticker_id=None)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        h.trades(ticker_id="USDT_NGNS")


@pytest.mark.parametrize(
    ("state", "lag", "expected"),
    [
        ("current", 0.0, None),
        ("current", 6.0, "behind its chain"),
        ("paused", 0.0, "fill index paused"),
        ("unreachable", 0.0, "chain unreachable"),
        ("starting", 0.0, "not ready"),
    ],
)
async def test_a_fill_index_that_is_not_current_makes_tickers_and_trades_502(
    state: str, lag: float, expected: str | None
) -> None:
    h = Harness()
    detail = {"paused": "fill index paused", "unreachable": "chain unreachable: x"}
    h.index.chains[97].state = state  # type: ignore[assignment]
    h.index.chains[97].detail = detail.get(state, "")
    if state == "starting":
        h.index.chains[97].last_current = None
    h.clock.mono += lag
    h.index.chains[56].last_current = h.clock.mono
    if expected is None:
        await h.feed.tickers(ticker_id=None, base=None, target=None)
        h.trades()
        return
    with pytest.raises(UpstreamError, match=expected):
        await h.feed.tickers(ticker_id=None, base=None, target=None)
    with pytest.raises(UpstreamError, match=expected):
        h.trades()
    assert len(h.feed.pairs()) == 4, "the pairs need no index"
    with pytest.raises(NotFound):  # a bad request is told so before the 502
        h.trades(ticker_id="NOPE_NOPE")


async def test_an_unpublished_chain_is_not_waited_for() -> None:
    h = Harness(chains=(56,))
    h.index.chains[97].state = "unreachable"
    assert len(await h.feed.tickers(ticker_id=None, base=None, target=None)) == 4
