"""Tickers: bid and ask price a trade of 100 units of the stable side net of fees (the best of
the market's chains), a side a firm quote reserves shows the newest cleared price for at most
90 s instead of 0, last/high/low/volumes cover the last 24 h of the simulator clock (so
advancing it ages trades out), and the reference when nothing traded. Plus selection errors and
the 502 of a fill index that is not current."""

from __future__ import annotations

import pytest

from simulator.errors import InvalidRequest, NotFound, UpstreamError
from simulator.services.feed.model import Ticker, decimal_string
from simulator.services.feed.ports import Clearing
from tests.unit.services.feed.harness import NGNS, T0, USDT, Harness

DAY = 86_400


def ticker(h: Harness, ticker_id: str = "USDT_NGN") -> dict[str, str]:
    (found,) = h.feed.tickers(ticker_id=ticker_id, base=None, target=None)
    return render(found)


def render(t: Ticker) -> dict[str, str]:
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


def test_bid_and_ask_price_100_stable_units_on_the_best_chain() -> None:
    h = Harness()
    quote_usdt_ngn(h, 56, bid=1598, ask=1602)
    quote_usdt_ngn(h, 97, bid=1599, ask=1603)
    t = ticker(h)
    assert (t["bid"], t["ask"]) == ("1599", "1602"), "highest bid, lowest ask across chains"
    sizes = {
        (a.leg.chain_id, a.sell.symbol, a.buy.symbol): (a.sell_amount, a.buy_amount)
        for a in h.prices.asked
    }
    # Fiat corridor: 100 USDT (the base) exact in on the bid, exact out on the ask.
    assert sizes[(97, "USDT", "NGNS")] == (100 * 10**18, None)
    assert sizes[(97, "NGNS", "USDT")] == (None, 100 * 10**18)


def test_an_asset_corridor_is_sized_in_its_stable_target() -> None:
    h = Harness()
    # Selling WBNB for exactly 100 USDT takes 0.1666... WBNB; 100 USDT buys 0.16 WBNB.
    h.prices.clearings[(97, "WBNB", "USDT")] = Clearing(166_666_666_666_666_667, 100 * 10**18)
    h.prices.clearings[(97, "USDT", "WBNB")] = Clearing(100 * 10**18, 16 * 10**16)
    t = ticker(h, "WBNB_USDT")
    assert t["bid"] == "599.9999999999999988"  # 100 / 0.166666666666666667, to 18 places
    assert t["ask"] == "625"
    sizes = {(a.sell.symbol, a.buy.symbol): (a.sell_amount, a.buy_amount) for a in h.prices.asked}
    assert sizes[("WBNB", "USDT")] == (None, 100 * 10**18)
    assert sizes[("USDT", "WBNB")] == (100 * 10**18, None)


def test_a_book_corridor_has_nothing_fillable_until_the_book_exists() -> None:
    h = Harness()
    t = ticker(h, "USDC_NGN")
    assert (t["bid"], t["ask"], t["last_price"]) == ("0", "0", "0")
    assert not any(a.leg.corridor.timing.mode == "BOOK" for a in h.prices.asked)


async def test_last_high_low_and_volumes_cover_the_last_24_hours_of_the_clock() -> None:
    h = Harness()
    quote_usdt_ngn(h, 97, bid=1590, ask=1610)
    await sell_usdt(h, 10, 16_000, at=T0 - 10)
    await sell_usdt(h, 1, 1_650, at=T0 - 5)
    await sell_usdt(h, 2, 3_100, at=T0)
    t = ticker(h)
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
    assert ticker(h)["base_volume"] == "13"
    h.clock.at = T0 - 10 + DAY + 0.5  # half a second more: out
    assert (ticker(h)["base_volume"], ticker(h)["high"]) == ("3", "1650")
    h.clock.at = T0 + DAY + 1  # all out: the reference (mid of bid and ask) everywhere
    assert ticker(h) == {
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
    assert ticker(h)["last_price"] == "0", "no quote, no trade ever"
    await sell_usdt(h, 1, 1_580, at=T0 - 2 * DAY)
    assert ticker(h)["last_price"] == "1580", "the market's last price, however old"
    h.prices.clearings[(97, "USDT", "NGNS")] = Clearing(100 * 10**18, 1_595 * 100 * 10**6)
    assert ticker(h)["last_price"] == "1595", "the side that quotes"
    quote_usdt_ngn(h, 97, bid=1595, ask=1606)
    assert ticker(h)["last_price"] == "1600.5", "both sides: their midpoint"


async def test_a_reserved_side_shows_the_newest_cleared_price_for_at_most_90_s() -> None:
    h = Harness()
    quote_usdt_ngn(h, 97, bid=1590, ask=1610)
    await sell_usdt(h, 1, 1_588, at=T0 - 3)
    await sell_usdt(h, 1, 1_587, at=T0 - 1)
    assert ticker(h)["bid"] == "1590"
    # A firm quote takes the makers' USDT->NGNS depth: the bid has nothing fillable.
    del h.prices.clearings[(97, "USDT", "NGNS")]
    h.prices.reserved[(97, "USDT", "NGNS")] = T0
    assert ticker(h)["bid"] == "1587", "the newest cleared price instead of 0"
    assert ticker(h)["ask"] == "1610", "the other side is untouched"
    h.clock.at = T0 + 90
    assert ticker(h)["bid"] == "1587"
    # Quotes keep the side reserved without a break: after 90 s it reads 0 all the same.
    h.prices.reserved[(97, "USDT", "NGNS")] = T0 + 50
    h.clock.at = T0 + 91
    assert ticker(h)["bid"] == "0"
    # The reservation ends: 0 (no maker quotes); a new one starts a new 90 s.
    del h.prices.reserved[(97, "USDT", "NGNS")]
    assert ticker(h)["bid"] == "0"
    h.prices.reserved[(97, "USDT", "NGNS")] = T0 + 95
    h.clock.at = T0 + 100
    assert ticker(h)["bid"] == "1587"
    # Liquidity back: the live price again.
    quote_usdt_ngn(h, 97, bid=1591, ask=1610)
    assert ticker(h)["bid"] == "1591"


def test_a_reserved_side_without_any_trade_reads_0() -> None:
    h = Harness()
    h.prices.reserved[(97, "NGNS", "USDT")] = T0
    assert ticker(h)["ask"] == "0"


def test_selection_by_ticker_base_and_target() -> None:
    h = Harness()
    everything = h.feed.tickers(ticker_id=None, base=None, target=None)
    assert [t.market.ticker_id for t in everything] == [
        "USDT_NGN",
        "USDC_USDT",
        "WBNB_USDT",
        "USDC_NGN",
    ]
    by_base = h.feed.tickers(ticker_id=None, base="USDC", target=None)
    assert [t.market.ticker_id for t in by_base] == ["USDC_USDT", "USDC_NGN"]
    by_target = h.feed.tickers(ticker_id=None, base=None, target="NGN")
    assert [t.market.ticker_id for t in by_target] == ["USDT_NGN", "USDC_NGN"]
    pinned = h.feed.tickers(ticker_id=None, base="USDC", target="NGN")
    assert [t.market.ticker_id for t in pinned] == ["USDC_NGN"]
    with pytest.raises(NotFound):
        h.feed.tickers(ticker_id="NGN_USDT", base=None, target=None)
    with pytest.raises(NotFound):
        h.feed.tickers(ticker_id=None, base="NGNS", target=None)
    with pytest.raises(NotFound):
        h.feed.tickers(ticker_id=None, base="NGN", target="USDT")
    with pytest.raises(InvalidRequest):
        h.feed.tickers(ticker_id="USDT_NGN", base="USDC", target=None)
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
def test_a_fill_index_that_is_not_current_makes_tickers_and_trades_502(
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
        h.feed.tickers(ticker_id=None, base=None, target=None)
        h.trades()
        return
    with pytest.raises(UpstreamError, match=expected):
        h.feed.tickers(ticker_id=None, base=None, target=None)
    with pytest.raises(UpstreamError, match=expected):
        h.trades()
    assert len(h.feed.pairs()) == 4, "the pairs need no index"
    with pytest.raises(NotFound):  # a bad request is told so before the 502
        h.trades(ticker_id="NOPE_NOPE")


def test_an_unpublished_chain_is_not_waited_for() -> None:
    h = Harness(chains=(56,))
    h.index.chains[97].state = "unreachable"
    assert len(h.feed.tickers(ticker_id=None, base=None, target=None)) == 4
