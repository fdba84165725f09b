"""The rates feed's pairs and tickers read as an aggregator reads them (spec 3 "Rates feed"):
no key, no version prefix, every deployed corridor once in its natural direction, tickers for
every pair or one, bid and ask exactly what the venue's preview clears a trade of 100 stable
units at (net of fees, best chain), 0 for a side nobody quotes, and the newest cleared price
while a firm quote reserves the only maker's inventory of a side.

Decisions these tests follow (docs/decisions.md "Rates feed"): one ticker per pair across
chains; bid/ask are sized in 100 units of USDT or USDC, whichever side of the pair is one (the
base first); BOOK corridors read 0 until the v1 book exists.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from conformance.chain import Wallet, wait_for
from conformance.client import Client
from conformance.control import FAST, Fleet
from conformance.feed import (
    fill_logs,
    get_pairs,
    get_ticker,
    get_tickers,
    number,
    price,
    published,
    wait_trades,
)
from conformance.funding import fund_wallet
from conformance.rfq_calls import (
    cancel,
    execute_quote,
    expect_quoted,
    keyed_client,
    keyless_client,
    new_key,
    preview,
    request_quote,
    rfq_body,
)
from conformance.sim_control import SimControl
from conformance.target import Target
from conformance.venue import ChainInfo, Venue

SIZE_SYMBOLS = ("USDT", "USDC")  # the stable sides that size bid and ask (decisions)


@pytest.fixture
def reader(target: Target, http: Client) -> Client:
    """An aggregator's client: no key, a client IP of its own (the per-IP backstop applies)."""
    return keyless_client(target, http)


def expected_pairs(venue: Venue) -> dict[str, tuple[str, str, set[str]]]:
    """ticker_id -> (base, target, modes) from every deployed corridor of every chain."""
    out: dict[str, tuple[str, str, set[str]]] = {}
    for chain in venue.chains.values():
        for corridor in chain.corridors:
            base = published(chain.token_at(corridor.base).symbol)
            target = published(chain.token_at(corridor.quote).symbol)
            entry = out.setdefault(f"{base}_{target}", (base, target, set()))
            entry[2].add(corridor.mode)
    return out


@pytest.mark.spec(
    "v1/overview/item-3",
    "v1/auth/rates-feed-needs-no",
    "v1/versioning/item-3",
    "v1/feed/get-only-no-key",
    "v1/feed/get-pairs/array-ticker_id-base-target",
    "v1/feed/every-deployed-corridor-listed",
    "v1/feed/each-pair-quoted-natural",
    "v1/feed/ticker_id-base_target-last_price-target",
    "v1/limits/rates-feed",
)
def test_pairs_list_every_deployed_corridor_once_in_natural_direction(
    target: Target, reader: Client
) -> None:
    pairs = get_pairs(reader)  # no key, no signature, at the root
    ids = [p["ticker_id"] for p in pairs]
    assert len(ids) == len(set(ids)), f"a pair listed twice: {ids}"
    for pair in pairs:
        assert "NGNS" not in (pair["base"], pair["target"]), "the naira stablecoin is NGN"
    if target.is_simulator:
        venue = Venue.of(target)
        expected = expected_pairs(venue)
        assert {p["ticker_id"]: (p["base"], p["target"]) for p in pairs} == {
            k: (b, t) for k, (b, t, _) in expected.items()
        }
        by_id = {p["ticker_id"]: p for p in pairs}
        # Fiat corridors quote the fiat per stablecoin; asset corridors stablecoin per unit.
        assert by_id["USDT_NGN"] == {"ticker_id": "USDT_NGN", "base": "USDT", "target": "NGN"}
        assert by_id["WBNB_USDT"]["target"] == "USDT"
        assert any("BOOK" in modes for _, _, modes in expected.values()), "BOOK listed too"
    # No version prefix: the feed lives at the root only.
    for prefix in ("/v1", "/v2"):
        assert reader.get(f"{prefix}/pairs").status == 404
        assert reader.get(f"{prefix}/tickers").status == 404
    # A key, even a malformed one, is neither needed nor looked at.
    assert get_pairs(reader.with_headers({"Authorization": "Bearer nonsense"})) == pairs


@pytest.mark.spec(
    "v1/feed/get-tickers/query",
    "v1/feed/get-tickers/no-parameters-returns-all",
    "v1/feed/get-tickers/response-array-ticker_id-base_currency",
    "v1/feed/ticker_id-base_target-last_price-target",
    "v1/auth/rates-feed-needs-no",
)
def test_tickers_for_all_pairs_or_the_ones_asked_for(reader: Client) -> None:
    pairs = get_pairs(reader)
    everything = get_tickers(reader)
    assert [t["ticker_id"] for t in everything] == [p["ticker_id"] for p in pairs]
    for ticker in everything:
        assert number(ticker["low"]) <= number(ticker["last_price"]) <= number(ticker["high"])
    first = pairs[0]
    assert [t["ticker_id"] for t in get_tickers(reader, ticker_id=first["ticker_id"])] == [
        first["ticker_id"]
    ]
    for pair in pairs:
        with_base = get_tickers(reader, base=pair["base"])
        assert pair["ticker_id"] in [t["ticker_id"] for t in with_base]
        assert all(t["base_currency"] == pair["base"] for t in with_base)
        pinned = get_tickers(reader, base=pair["base"], target=pair["target"])
        assert [t["ticker_id"] for t in pinned] == [pair["ticker_id"]]
    with_target = get_tickers(reader, target=first["target"])
    assert all(t["target_currency"] == first["target"] for t in with_target)


def side_price(
    client: Client, chain: ChainInfo, base: str, target: str, quote: str
) -> Decimal | None:
    """What POST /v2/rfq/preview (no steering) clears 100 stable units at on `chain`: the bid
    (the taker sells the base) or the ask (buys it), target per base; None: no quote."""
    base_token, target_token = chain.token(base), chain.token(target)
    sized = base_token if base in SIZE_SYMBOLS or target not in SIZE_SYMBOLS else target_token
    size = sized.units(100)
    sell, buy = (base, target) if quote == "bid" else (target, base)
    exact_in = sized.symbol == sell
    body = rfq_body(
        chain,
        sell,
        buy,
        sell_amount=size if exact_in else None,
        buy_amount=None if exact_in else size,
    )
    data = preview(client, body)
    if data.get("status") != "preview":
        return None
    paid, got = int(data["takerPays"]), int(data["buyAmount"])
    base_amount, target_amount = (paid, got) if quote == "bid" else (got, paid)
    return Decimal(price(target_amount, target_token.decimals, base_amount, base_token.decimals))


def expected_side(client: Client, venue: Venue, base: str, target: str, quote: str) -> Decimal:
    prices = [
        p
        for chain in venue.chains.values()
        if (p := side_price(client, chain, base, target, quote)) is not None
    ]
    if not prices:
        return Decimal(0)
    return max(prices) if quote == "bid" else min(prices)


@pytest.mark.sim_only
@pytest.mark.spec(
    "v1/feed/get-tickers/bid-and-ask",
    "v1/feed/each-pair-quoted-natural",
    "v1/feed/get-tickers/last_price-high-and-low",
)
def test_bid_and_ask_are_what_the_preview_clears_100_stable_units_at(
    target: Target, reader: Client, fleet: Fleet
) -> None:
    venue = Venue.of(target)
    # The fiat corridor is sized on its base (100 USDT), the asset corridor on its target.
    for base, target_symbol, ticker_id in (
        ("USDT", "NGNS", "USDT_NGN"),
        ("WBNB", "USDT", "WBNB_USDT"),
    ):

        def matches(
            base: str = base, target_symbol: str = target_symbol, ticker_id: str = ticker_id
        ) -> dict[str, Any] | None:
            bid = expected_side(reader, venue, base, target_symbol, "bid")
            ask = expected_side(reader, venue, base, target_symbol, "ask")
            ticker = get_ticker(reader, ticker_id)
            same = (number(ticker["bid"]), number(ticker["ask"])) == (bid, ask)
            return ticker if same and bid > 0 and ask > bid else None

        ticker = wait_for(matches, interval=0.5, what=f"{ticker_id} bid/ask = the preview's")
        assert number(ticker["bid"]) < number(ticker["ask"]), "fees and spread on both sides"
    # A BOOK corridor has no resting order to clear against (the v1 book is not built): 0.
    book = [t for t in get_tickers(reader) if t["ticker_id"] == "USDC_NGN"]
    assert [(t["bid"], t["ask"]) for t in book] == [("0", "0")]
    # Nobody quoting: both sides read 0.
    fleet.only({})

    def blank() -> dict[str, Any] | None:
        ticker = get_ticker(reader, "USDT_NGN")
        return ticker if (ticker["bid"], ticker["ask"]) == ("0", "0") else None

    wait_for(blank, interval=0.5, what="USDT_NGN to read 0 with every maker offline")


def fund_everywhere(venue: Venue, source: Wallet, usdt: int) -> Wallet:
    """A fresh taker holding `usdt` whole USDT and gas on every chain."""
    taker = Wallet.create()
    for chain in venue.chains.values():
        token = chain.token("USDT")
        fund_wallet(chain, source, {token.address: token.units(usdt)}, wallet=taker)
    return taker


def reserving_fraction(venue: Venue, maker: str) -> float:
    """A share of its inventory for `maker` to show such that its NGNS covers the bid's 100
    USDT (about 160,000 NGNS) on every chain, and no longer does once a firm quote for 100 USDT
    holds that much (shown depth = what is left after its live quotes, times the share)."""
    need = 160_000
    balances = [
        chain.rpc().balance_of(chain.token("NGNS").address, maker) // 10**6
        for chain in venue.chains.values()
    ]
    fraction = 1.06 * need / min(balances)
    assert all((b - need) * fraction < 0.97 * need for b in balances), (balances, fraction)
    assert fraction <= 1, balances
    return round(fraction, 6)


@pytest.mark.sim_only
@pytest.mark.spec("v1/feed/get-tickers/while-firm-rfq-quote", "v1/feed/get-tickers/bid-and-ask")
def test_a_side_a_firm_quote_reserves_shows_the_newest_cleared_price(
    target: Target, sim: SimControl, http: Client, reader: Client, fleet: Fleet
) -> None:
    venue = Venue.of(target)
    taker = fund_everywhere(venue, venue.demo_wallets[-1], 300)
    # One maker only, showing just over the bid's 100 USDT worth of NGNS on every chain.
    fraction = reserving_fraction(venue, fleet.wallet("alpha"))
    fleet.only({"alpha": {**FAST, "max_inventory_fraction": fraction}})
    fleet.wait_levels(["alpha"])

    # A cleared price to fall back on: the taker sells 2 USDT on chain 97.
    test_chain = venue.chain(97)
    trader = keyed_client(http, new_key(sim, "test"))
    body = rfq_body(
        test_chain,
        "USDT",
        "NGNS",
        sell_amount=test_chain.token("USDT").units(2),
        taker=taker.address,
    )
    receipt = test_chain.rpc().wait_receipt(
        execute_quote(test_chain, taker, expect_quoted(request_quote(trader, body)))
    )
    (fill,) = fill_logs(receipt, test_chain.reactor)
    newest = wait_trades(reader, "USDT_NGN", [fill.trade_id])[fill.trade_id]["price"]

    def live() -> dict[str, Any] | None:
        ticker = get_ticker(reader, "USDT_NGN")
        return ticker if ticker["last_price"] == newest and number(ticker["bid"]) > 0 else None

    wait_for(live, interval=0.5, what="a live bid and the small trade as the last price")

    # Firm quotes for 100 USDT on every chain: they hold alpha's NGNS until given back.
    quotes: list[tuple[Client, dict[str, Any]]] = []
    try:
        for chain in venue.chains.values():
            client = keyed_client(http, new_key(sim, chain.environment))
            body = rfq_body(
                chain,
                "USDT",
                "NGNS",
                sell_amount=chain.token("USDT").units(100),
                taker=taker.address,
            )
            quotes.append((client, expect_quoted(request_quote(client, body))))

        def fallen_back() -> dict[str, Any] | None:
            ticker = get_ticker(reader, "USDT_NGN")
            return ticker if ticker["bid"] == newest else None

        ticker = wait_for(fallen_back, interval=0.5, what="the reserved bid to show the price")
        assert number(ticker["ask"]) > 0, "the other side is not reserved"
        assert expected_side(reader, venue, "USDT", "NGNS", "bid") == 0, (
            "at 100 USDT the preview has nothing fillable: without the rule the bid would be 0"
        )
    finally:
        for client, data in quotes:
            cancel(client, data["rfqId"], data["claimToken"])

    def live_again() -> dict[str, Any] | None:
        ticker = get_ticker(reader, "USDT_NGN")
        bid = expected_side(reader, venue, "USDT", "NGNS", "bid")
        return ticker if bid > 0 and number(ticker["bid"]) == bid else None

    wait_for(live_again, interval=0.5, what="the live bid once the quotes are given back")
