"""The rates feed's trade history against the chain (spec 3 "GET /historical_trades"): trades
made by the test itself — RFQ fills (exact input and output, a bundle of three makers in one
transaction, never reported to /submit) and orders the service never quoted, signed by a maker
of the test's own and executed on the reactor directly, on an RFQ corridor and on the BOOK
corridor — each published once as `<txHash>-<logIndex>`, `buy` when the taker received the
base, with the volumes that left and reached the taker's wallet (the fee included) and the
price target per base normalized by each token's decimals; then read as an aggregator reads
it: paged back by end_time across a second holding more trades than the limit, deduplicated by
trade_id, filtered by type; the newest trade as the tickers' last price, within their high and
low; and the 24 h window of the tickers aged by advancing the clock.
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest

from conformance.calls.control import FAST, Fleet, Liquidity
from conformance.calls.feed import (
    DirectMaker,
    FillLog,
    Leg,
    block_time,
    fill_logs,
    get_ticker,
    get_trades,
    number,
    page_back,
    price,
    volume,
    wait_trades,
)
from conformance.calls.rfq_calls import (
    execute_quote,
    expect_quoted,
    keyless_client,
    preview,
    request_quote,
    rfq_body,
)
from conformance.checks.assertions import assert_firm_quote
from conformance.checks.stable_reads import KINDS, a_second_later, assert_stable
from conformance.deployment.funding import Balances, fund_wallet
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import Token, VenueChain
from conformance.wire.chain import wait_for
from conformance.wire.client import Client
from rfqkit.wallets import Wallet


@pytest.fixture
def reader(target: Target, http: Client) -> Client:
    """An aggregator's client: no key, a client IP of its own."""
    return keyless_client(target, http)


def expected_trade(chain: VenueChain, fill: FillLog, base: Token, target: Token) -> dict[str, Any]:
    """The trade the feed must publish for one Fill event, from the chain's own numbers."""
    paid = fill.output_amount + fill.fee_amount  # what left the taker, fee included
    if fill.input_token == base.address:  # the taker received the base: a buy
        side, base_amount, target_amount = "buy", fill.input_amount, paid
    else:
        assert fill.output_token == base.address, fill
        side, base_amount, target_amount = "sell", paid, fill.input_amount
    return {
        "trade_id": fill.trade_id,
        "type": side,
        "base_volume": volume(base_amount, base.decimals),
        "target_volume": volume(target_amount, target.decimals),
        "price": price(target_amount, target.decimals, base_amount, base.decimals),
    }


def check_published(
    reader: Client,
    chain: VenueChain,
    receipt: dict[str, Any],
    ticker_id: str,
    base: Token,
    target: Token,
) -> list[dict[str, Any]]:
    """Every Fill of the receipt is one trade of `ticker_id`, exactly as the chain says."""
    fills = fill_logs(receipt, chain.reactor)
    assert fills, receipt
    stamp = block_time(chain, receipt)
    published = wait_trades(reader, ticker_id, [f.trade_id for f in fills], start_time=stamp)
    out = []
    for fill in fills:
        trade = published[fill.trade_id]
        expected = expected_trade(chain, fill, base, target)
        assert {k: trade[k] for k in expected} == expected, (trade, fill)
        assert trade["trade_timestamp"] == stamp, "the block's time, in Unix seconds"
        out.append(trade)
    return out


@pytest.mark.needs("key:trades", "taker_wallet")
@pytest.mark.spec(
    "v1/feed/get-historical_trades/query",
    "v1/feed/get-historical_trades/response-buy-sell-newest",
    "v1/feed/get-historical_trades/trade_id-fills-transaction-hash",
    "v1/feed/get-historical_trades/type-buy-means-base",
    "v1/feed/get-historical_trades/every-settlement-corridors-reactor",
    "v1/feed/ticker_id-base_target-last_price-target",
    "v1/feed/each-pair-quoted-natural",
    *KINDS["feed_trade"].rules,
)
def test_rfq_fills_are_trades_in_natural_direction_with_exact_amounts(
    trader: Client,
    reader: Client,
    chain: VenueChain,
    source: Wallet,
    liquidity: Liquidity,
    clock: ServiceClock,
) -> None:
    usdt, ngns, wbnb, usdc = (chain.token(s) for s in ("USDT", "NGNS", "WBNB", "USDC"))
    node = chain.rpc()
    # The smallest sizes the corridors allow (multiples of the chain's minimum, 0.01 of the
    # named token on chain 97): a QA team's wallet pays for what the taker trades away.
    least = chain.min_size
    taker = fund_wallet(
        chain, source, {usdt.address: usdt.units(least * 100), usdc.address: usdc.units(least * 5)}
    )

    def filled(
        sell: str, buy: str, sell_amount: int | None = None, buy_amount: int | None = None
    ) -> dict[str, Any]:
        """A firm quote of `sell` for `buy`, executed by the taker: its receipt."""
        body = rfq_body(
            chain, sell, buy, sell_amount=sell_amount, buy_amount=buy_amount, taker=taker.address
        )
        return node.wait_receipt(
            execute_quote(chain, taker, expect_quoted(request_quote(trader, body)))
        )

    # 1. The taker sells 0.125 USDT (18 dp) for NGNS (6 dp): a sell of USDT_NGN. Not reported.
    before = Balances.read(node, [usdt.address, ngns.address], [taker.address])
    receipt = filled("USDT", "NGNS", sell_amount=usdt.units(least * Decimal("12.5")))
    after = before.again()
    (trade,) = check_published(reader, chain, receipt, "USDT_NGN", usdt, ngns)
    read_at = time.monotonic()
    assert trade["type"] == "sell", "the taker sold the base"
    paid, got = (
        -before.delta(after, usdt.address, taker.address),
        before.delta(after, ngns.address, taker.address),
    )
    assert trade["base_volume"] == volume(paid, 18), "what left the taker's wallet"
    assert trade["target_volume"] == volume(got, 6), "what reached it"
    assert Decimal(trade["price"]) > 1000, "NGN per USDT, not USDT per NGN"
    # Another sell of the pair in a later second: newest first then shows on the test's own
    # two trades, whatever else the corridor traded (two fills in one second cannot show it).
    first = trade
    wait_for(
        lambda: True if clock.now_ms() // 1000 > first["trade_timestamp"] else None,
        interval=0.05,
        what="the service clock past the first fill's second",
    )
    receipt = filled("USDT", "NGNS", sell_amount=usdt.units(least * Decimal("1.5")))
    (later,) = check_published(reader, chain, receipt, "USDT_NGN", usdt, ngns)
    assert later["trade_timestamp"] > first["trade_timestamp"], (first, later)
    reread = a_second_later(read_at, "trade")
    sold = get_trades(reader, "USDT_NGN", type="sell")["sell"]
    listed = [t["trade_id"] for t in sold]
    assert listed.index(later["trade_id"]) < listed.index(first["trade_id"]), "newest first"
    # trade_id is stable: the first trade read again, a second or more later, is the same row,
    # figure for figure.
    again = sold[listed.index(first["trade_id"])]
    assert_stable("feed_trade", first["trade_id"], first, again, what=reread)

    # 2. The taker buys WBNB with the least USDT: a buy of WBNB_USDT (USDT per WBNB).
    before = Balances.read(node, [usdt.address, wbnb.address], [taker.address])
    receipt = filled("USDT", "WBNB", sell_amount=usdt.units(least))
    after = before.again()
    (trade,) = check_published(reader, chain, receipt, "WBNB_USDT", wbnb, usdt)
    assert trade["type"] == "buy", "the taker bought the base"
    assert trade["base_volume"] == volume(before.delta(after, wbnb.address, taker.address), 18)
    assert trade["target_volume"] == volume(-before.delta(after, usdt.address, taker.address), 18)
    assert Decimal(trade["price"]) > 100, "USDT per WBNB"

    # 3. The taker sells 0.025 USDC (6 dp) for USDT (18 dp): a sell of USDC_USDT.
    receipt = filled("USDC", "USDT", sell_amount=usdc.units(least * Decimal("2.5")))
    (trade,) = check_published(reader, chain, receipt, "USDC_USDT", usdc, usdt)
    assert (trade["type"], trade["base_volume"]) == ("sell", "0.025")
    assert Decimal("0.9") < Decimal(trade["price"]) < Decimal("1.1")

    # The type filter: both keys, the other side empty.
    sells = get_trades(reader, "USDT_NGN", type="sell")
    assert sells["buy"] == [], sells
    buys = get_trades(reader, "WBNB_USDT", type="buy")
    assert buys["sell"] == [], buys
    # base + target name the same pair as ticker_id.
    by_id = get_trades(reader, "USDT_NGN", limit=5)
    by_symbols = reader.get(
        "/historical_trades", params={"base": "USDT", "target": "NGN", "limit": 5}
    )
    assert by_symbols.status == 200, by_symbols.describe()
    assert by_symbols.json() == by_id


@pytest.mark.needs("key:trades", "taker_wallet")
@pytest.mark.spec(
    "v1/feed/get-tickers/last_price-high-and-low",
    "v1/feed/get-tickers/base_volume-and-target_volume",
)
def test_last_price_is_the_newest_trade_and_the_day_lies_within_high_and_low(
    trader: Client,
    reader: Client,
    chain: VenueChain,
    source: Wallet,
    liquidity: Liquidity,
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(chain.min_size * 10)})
    body = rfq_body(
        chain, "USDT", "NGNS", sell_amount=usdt.units(chain.min_size * 3), taker=taker.address
    )
    receipt = chain.rpc().wait_receipt(
        execute_quote(chain, taker, expect_quoted(request_quote(trader, body)))
    )
    (mine,) = check_published(reader, chain, receipt, "USDT_NGN", usdt, ngns)
    since = {"start_time": mine["trade_timestamp"], "limit": 1000}

    def steady() -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        # A ticker read between two equal pages of the trades since mine: no trade landed
        # meanwhile, so the newest of them is the most recent cleared price (other clients
        # may trade this pair too; responses may be cached for a few seconds).
        before = get_trades(reader, "USDT_NGN", **since)
        ticker = get_ticker(reader, "USDT_NGN")
        if get_trades(reader, "USDT_NGN", **since) != before:
            return None
        trades = before["buy"] + before["sell"]
        newest = max(t["trade_timestamp"] for t in trades)
        latest = {t["price"] for t in trades if t["trade_timestamp"] == newest}
        return (ticker, trades) if ticker["last_price"] in latest else None

    ticker, trades = wait_for(steady, interval=0.5, what="the newest trade as the last price")
    assert mine["trade_id"] in {t["trade_id"] for t in trades}, trades
    # Every trade since mine is inside the last 24 h: high and low bound its price, and the
    # day's volumes hold at least theirs.
    for trade in trades:
        assert number(ticker["low"]) <= number(trade["price"]) <= number(ticker["high"]), (
            ticker,
            trade,
        )
    for field in ("base_volume", "target_volume"):
        assert number(ticker[field]) >= sum(number(t[field]) for t in trades), (ticker, field)


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "v1/feed/get-historical_trades/trade_id-fills-transaction-hash",
    "v1/feed/get-historical_trades/every-settlement-corridors-reactor",
    "v1/feed/get-historical_trades/page-never-splits-second",
)
def test_a_bundle_of_three_makers_in_one_transaction_is_three_trades(
    trader: Client, reader: Client, chain: VenueChain, source: Wallet, fleet: Fleet
) -> None:
    usdc, usdt = chain.token("USDC"), chain.token("USDT")
    shallow = {**FAST, "max_inventory_fraction": 0.001}  # about 1,000 USDT shown each
    bundled = ("alpha", "bravo", "charlie")
    fleet.only(dict.fromkeys(bundled, shallow))

    def depth(name: str) -> int:
        body = rfq_body(
            chain,
            "USDC",
            "USDT",
            sell_amount=usdc.units(1),
            restrictedLiquidityWallets=[fleet.wallet(name)],
        )
        return int(preview(trader, body).get("availableSellAmount") or 0)

    def shallow_depths() -> dict[str, int] | None:
        depths = {name: depth(name) for name in bundled}
        return depths if all(0 < d < usdc.units(1_200) for d in depths.values()) else None

    depths = wait_for(shallow_depths, interval=0.3, what="the makers' shallower levels")
    size = sum(depths.values()) * 85 // 100
    taker = fund_wallet(chain, source, {usdc.address: size})
    data = request_quote(
        trader, rfq_body(chain, "USDC", "USDT", sell_amount=size, taker=taker.address)
    )
    checked = assert_firm_quote(
        chain, data, sell="USDC", buy="USDT", taker=taker.address, sell_amount=size
    )
    assert len({o.maker for o in checked.orders}) == 3, "a bundle of three makers"
    receipt = chain.rpc().wait_receipt(execute_quote(chain, taker, data))
    trades = check_published(reader, chain, receipt, "USDC_USDT", usdc, usdt)
    ids = [t["trade_id"] for t in trades]
    assert len(ids) == len(set(ids)) == len(checked.orders), ids
    assert len({i.split("-")[0] for i in ids}) == 1, "one transaction hash, distinct log indexes"
    assert len({t["trade_timestamp"] for t in trades}) == 1, "one second"
    # A page of limit 1 never splits that second: all three come back together.
    stamp = trades[0]["trade_timestamp"]
    page = get_trades(reader, "USDC_USDT", limit=1, start_time=stamp, end_time=stamp)
    assert {t["trade_id"] for t in page["sell"]} >= set(ids), page


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "v1/feed/get-historical_trades/every-settlement-corridors-reactor",
    "v1/feed/get-historical_trades/type-buy-means-base",
    "v1/feed/get-historical_trades/trade_id-fills-transaction-hash",
)
def test_orders_nobody_quoted_filled_directly_on_the_reactor_count(
    reader: Client, chain: VenueChain, source: Wallet
) -> None:
    usdt, ngns, usdc = chain.token("USDT"), chain.token("NGNS"), chain.token("USDC")
    maker = DirectMaker(
        chain, source, {ngns.address: ngns.units(50_000), usdt.address: usdt.units(50)}
    )
    taker = fund_wallet(
        chain, source, {ngns.address: ngns.units(6_000), usdc.address: usdc.units(20)}
    )
    # The taker buys 3 USDT for 4,830 NGNS straight from the maker: a buy of USDT_NGN.
    receipt = maker.fill(taker, [Leg(usdt, usdt.units(3), ngns, ngns.units(4_830))])
    (trade,) = check_published(reader, chain, receipt, "USDT_NGN", usdt, ngns)
    assert (trade["type"], trade["base_volume"]) == ("buy", "3")
    # A fill on the BOOK corridor (USDC/NGNS), which the RFQ API does not quote at all.
    receipt = maker.fill(taker, [Leg(ngns, ngns.units(15_950), usdc, usdc.units(10))])
    (trade,) = check_published(reader, chain, receipt, "USDC_NGN", usdc, ngns)
    assert trade["type"] == "sell", "the taker sold USDC"
    assert trade["base_volume"] == "10.005", "10 USDC to the maker and 0.005 of fee"


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "v1/feed/get-historical_trades/page-never-splits-second",
    "v1/feed/get-historical_trades/query",
    "v1/feed/get-historical_trades/response-buy-sell-newest",
    "v1/feed/get-historical_trades/type-buy-means-base",
    "v1/limits/rates-feed",
)
def test_paging_back_by_end_time_yields_every_trade_exactly_once(
    reader: Client, chain: VenueChain, source: Wallet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    maker = DirectMaker(
        chain, source, {ngns.address: ngns.units(100_000), usdt.address: usdt.units(100)}
    )
    taker = fund_wallet(
        chain, source, {usdt.address: usdt.units(100), ngns.address: ngns.units(100_000)}
    )
    fills: list[FillLog] = []
    # Single trades of both sides, then five orders in one transaction (one second, more than
    # the limit), then single trades again.
    for leg in (
        Leg(ngns, ngns.units(1_601), usdt, usdt.units(1)),  # the taker sells USDT
        Leg(usdt, usdt.units(1), ngns, ngns.units(1_602)),  # the taker buys USDT
    ):
        fills += fill_logs(maker.fill(taker, [leg]), chain.reactor)
    crowded = maker.fill(
        taker, [Leg(usdt, usdt.units(1), ngns, ngns.units(1_600 + n)) for n in range(5)]
    )
    crowd = fill_logs(crowded, chain.reactor)
    assert len(crowd) == 5
    fills += crowd
    for leg in (
        Leg(usdt, usdt.units(2), ngns, ngns.units(3_210)),
        Leg(ngns, ngns.units(3_190), usdt, usdt.units(2)),
    ):
        fills += fill_logs(maker.fill(taker, [leg]), chain.reactor)
    first = fills[0]
    start = chain.rpc().rpc("eth_getBlockByNumber", [hex(first.block_number), False])
    start_time = int(start["timestamp"], 16)
    mine = {f.trade_id for f in fills}
    wait_trades(reader, "USDT_NGN", mine, start_time=start_time)

    # The whole window in one page, as the reference.
    everything = get_trades(reader, "USDT_NGN", limit=1000, start_time=start_time)
    reference = {t["trade_id"] for t in everything["buy"] + everything["sell"]}
    assert mine <= reference
    for limit, kind in ((1, None), (2, None), (3, None), (2, "buy"), (1, "sell")):
        params: dict[str, Any] = {"start_time": start_time}
        if kind is not None:
            params["type"] = kind
        ingested = page_back(reader, "USDT_NGN", limit=limit, **params)
        assert ingested.duplicates == 0, "paging back never returns a trade twice"
        wanted = {
            t["trade_id"]
            for side in ("buy", "sell")
            if kind in (None, side)
            for t in everything[side]
        }
        assert set(ingested.trades) == wanted, f"limit {limit}, type {kind}: every trade once"
        for page in ingested.pages:
            stamps = {t["trade_timestamp"] for s in ("buy", "sell") for t in page[s]}
            for side in ("buy", "sell"):
                assert len(page[side]) <= limit or len(stamps) == 1, (
                    f"over the limit only for a second that holds more: {page}"
                )
                if kind is not None and side != kind:
                    assert page[side] == [], page
        crowd_ids = {f.trade_id for f in crowd}
        if kind != "sell":
            holding = [p for p in ingested.pages if crowd_ids & {t["trade_id"] for t in p["buy"]}]
            assert len(holding) == 1, "the crowded second is never split across pages"
            assert crowd_ids <= {t["trade_id"] for t in holding[0]["buy"]}
    # A limit above 1000 is clamped, not refused; end_time bounds are inclusive.
    assert get_trades(reader, "USDT_NGN", limit=50_000, start_time=start_time) == everything
    stamp = block_time(chain, crowded)
    exact = get_trades(reader, "USDT_NGN", start_time=stamp, end_time=stamp)
    assert {f.trade_id for f in crowd} <= {t["trade_id"] for t in exact["buy"]}
    assert all(t["trade_timestamp"] == stamp for t in exact["buy"] + exact["sell"])


@pytest.mark.sim_only(because="clock")
@pytest.mark.spec(
    "v1/feed/get-tickers/last_price-high-and-low",
    "v1/feed/get-tickers/base_volume-and-target_volume",
    "v1/feed/ticker_id-base_target-last_price-target",
)
def test_the_24_hour_window_ages_with_the_simulator_clock(
    sim: SimControl, reader: Client, chain: VenueChain, source: Wallet, fleet: Fleet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    maker = DirectMaker(chain, source, {ngns.address: ngns.units(20_000)})
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(20)})
    receipt = maker.fill(taker, [Leg(ngns, ngns.units(16_250), usdt, usdt.units(10))])
    (fill,) = fill_logs(receipt, chain.reactor)
    stamp = block_time(chain, receipt)
    trade = wait_trades(reader, "USDT_NGN", [fill.trade_id], start_time=stamp)[fill.trade_id]

    def newest_is_mine() -> dict[str, Any] | None:
        ticker = get_ticker(reader, "USDT_NGN")
        return ticker if ticker["last_price"] == trade["price"] else None

    ticker = wait_for(newest_is_mine, interval=0.5, what="the trade as the last price")
    assert number(ticker["low"]) <= number(trade["price"]) <= number(ticker["high"])
    assert number(ticker["base_volume"]) >= number(trade["base_volume"])
    assert number(ticker["target_volume"]) >= number(trade["target_volume"])

    # Just inside 24 h of the clock: the trade still counts.
    age = sim.now_ms() // 1000 - stamp
    sim.advance(86_400 - age - 20)
    ticker = get_ticker(reader, "USDT_NGN")
    assert ticker["last_price"] == trade["price"], ticker
    assert number(ticker["base_volume"]) >= number(trade["base_volume"]), ticker
    # Past 24 h: nothing traded in the window, so no volume and the indicative reference.
    sim.advance(40)

    def quoted_again() -> dict[str, Any] | None:
        ticker = get_ticker(reader, "USDT_NGN")
        return ticker if number(ticker["bid"]) > 0 and number(ticker["ask"]) > 0 else None

    ticker = wait_for(quoted_again, interval=0.5, what="the makers' levels after the advance")
    assert (ticker["base_volume"], ticker["target_volume"]) == ("0", "0"), ticker
    assert ticker["high"] == ticker["low"] == ticker["last_price"], ticker
    # The reference with both sides quoting: their midpoint (decisions "Rates feed").
    mid = (number(ticker["bid"]) + number(ticker["ask"])) / 2
    assert abs(number(ticker["last_price"]) - mid) < Decimal("1e-17"), ticker
    assert number(ticker["bid"]) < number(ticker["last_price"]) < number(ticker["ask"])
