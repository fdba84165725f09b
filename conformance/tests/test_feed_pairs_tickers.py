"""The rates feed's pairs and tickers read as an aggregator reads them (spec 3 "Rates feed"):
no key, no version prefix, every deployed corridor once in its natural direction, tickers for
every pair or one, bid and ask exactly what the venue's preview clears a trade of 100 stable
units at (net of fees, best chain), 0 for a side nobody quotes, and the newest cleared price
while a firm quote reserves the only maker's inventory of a side.

A v1-book corridor is priced by the book matcher: with resting offers on a side (one of them
the test's own, 50 stable units, a little worse than the rest) that side is not 0 and lies
within the prices of the offers GET /v1/order-book shows, fee included, on every chain read.

Decisions these tests follow (docs/decisions.md "Rates feed"): one ticker per pair across
chains; bid/ask are sized in 100 units of USDT or USDC, whichever side of the pair is one (the
base first).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from conformance.calls.control import FAST, Fleet
from conformance.calls.feed import (
    fill_logs,
    get_pairs,
    get_ticker,
    get_tickers,
    number,
    price,
    published,
    wait_trades,
)
from conformance.calls.rfq_calls import (
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
from conformance.calls.v1_book import (
    Integrator,
    PlacedOrder,
    funded_maker,
    invalidate_nonce,
    order_book,
    place,
    v1_integrator,
)
from conformance.calls.v1_target import with_signature_transfer
from conformance.deployment.funding import fund_wallet
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import Venue, VenueChain
from conformance.wire.chain import wait_for
from conformance.wire.client import Client
from rfqkit.wallets import Wallet

SIZE_SYMBOLS = ("USDT", "USDC")  # the stable sides that size bid and ask (decisions)
WEEK_S = 7 * 86_400


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
    "v1/feed/get-tickers/bid-and-ask",
    "v1/feed/get-tickers/last_price-high-and-low",
)
def test_tickers_for_all_pairs_or_the_ones_asked_for(reader: Client) -> None:
    pairs = get_pairs(reader)
    everything = get_tickers(reader)
    # Every read also compares each ticker's own fields (feed.py `assert_tickers`): bid not
    # above ask, low <= last_price <= high.
    assert [t["ticker_id"] for t in everything] == [p["ticker_id"] for p in pairs]
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
    client: Client, chain: VenueChain, base: str, target: str, quote: str
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


@pytest.mark.sim_only(because="makers")  # every maker offline: both sides read 0
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


@pytest.mark.sim_only(because="makers")  # one maker, a depth a firm quote exhausts
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


def book_pair(chain: VenueChain, reader: Client) -> tuple[str, str] | None:
    """(base, target) symbols of a v1-book corridor of `chain`: the one the venue's info names,
    else a pair the rates feed lists (every deployed corridor, spec 3) in its natural direction
    that the chain's RFQ ladder does not (it lists every RFQ pair)."""
    for corridor in chain.corridors:
        if corridor.mode == "BOOK":
            return chain.token_at(corridor.base).symbol, chain.token_at(corridor.quote).symbol
    symbols = {published(symbol): symbol for symbol in chain.tokens}
    rfq = {
        frozenset((chain.token_at(sell).symbol, chain.token_at(buy).symbol))
        for sell, buy in chain.rfq_directions()
    }
    for pair in get_pairs(reader):
        base, target = symbols.get(pair["base"]), symbols.get(pair["target"])
        if base is not None and target is not None and frozenset((base, target)) not in rfq:
            return base, target
    return None


def offer_prices(
    client: Client, chain: VenueChain, base: str, target: str, quote: str
) -> list[str]:
    """Every offer GET /v1/order-book shows the side's taker on `chain` (bid: the taker sells
    the base), priced as the feed prices: target per base, what the taker pays included."""
    base_token, target_token = chain.token(base), chain.token(target)
    sell, buy = (base_token, target_token) if quote == "bid" else (target_token, base_token)
    prices = []
    for offer in order_book(client, chain, sell, buy)["offers"]:
        paid, got = int(offer["sellAmount"]), int(offer["buyAmount"])
        base_amount, target_amount = (paid, got) if quote == "bid" else (got, paid)
        prices.append(price(target_amount, target_token.decimals, base_amount, base_token.decimals))
    return prices


def rest_worse_than_the_book(
    integrator: Integrator,
    clock: ServiceClock,
    chain: VenueChain,
    source: Wallet,
    base: str,
    target: str,
    stable: str,
    worst: dict[str, Decimal],
) -> tuple[Wallet, list[PlacedOrder]]:
    """One order per side of 50 `stable` units, 1 % worse for its taker than the worst offer
    of that side: the last in matching order, so no filling operator takes it before the rest
    (and it is an offer that a trade of about 100 stable units can take whole). They rest a
    week of the service's clock, so another test moving that clock does not expire them."""
    base_token, target_token = chain.token(base), chain.token(target)
    amounts: dict[str, tuple[Decimal, Decimal]] = {}  # side -> (base, target) whole units
    for quote, factor in (("bid", Decimal("0.99")), ("ask", Decimal("1.01"))):
        rate = worst[quote] * factor  # target per base
        fifty = Decimal(50)
        amounts[quote] = (fifty, fifty * rate) if stable == base else (fifty / rate, fifty)
    bid_base, bid_target = amounts["bid"]  # the maker sells target for base
    ask_base, ask_target = amounts["ask"]  # the maker sells base for target
    maker = funded_maker(
        chain,
        source,
        {target_token: target_token.units(bid_target), base_token: base_token.units(ask_base)},
    )
    orders = (
        (target_token, bid_target, base_token, bid_base),  # the bid side's
        (base_token, ask_base, target_token, ask_target),  # the ask side's
    )
    placed = [
        place(
            integrator,
            clock,
            chain,
            maker,
            sell,
            sell.units(sold),
            buy,
            buy_amount=buy.units(bought),
            ttl_s=WEEK_S,
        )
        for sell, sold, buy, bought in orders
    ]
    return maker, placed


def priced_within(
    ticker: dict[str, Any], books: dict[tuple[int, str], list[str]], every_chain: bool
) -> str | None:
    """What is wrong with the ticker's bid and ask against the books read (chain, side) ->
    offer prices, each side holding offers; None when nothing is. Any set of offers a matcher
    takes clears between its worst and its best price, and the published side is the best
    chain's: so it is at least every chain's worst, and (with every chain of the pair read) at
    most the best of all."""
    for quote in ("bid", "ask"):
        sides = {
            chain: [number(p) for p in prices] for (chain, q), prices in books.items() if q == quote
        }
        side = number(ticker[quote])
        resting = sum(len(prices) for prices in sides.values())
        if not side:
            return f"{quote} is 0 while {resting} offers rest on that side"
        for chain, prices in sides.items():
            if not prices:
                continue
            # For the taker, a higher bid and a lower ask are better.
            worst = min(prices) if quote == "bid" else max(prices)
            if (side < worst) if quote == "bid" else (side > worst):
                return f"{quote} {side} is worse than every offer of chain {chain} ({worst})"
        every = [p for prices in sides.values() for p in prices]
        if every_chain and every:
            best = max(every) if quote == "bid" else min(every)
            if (side > best) if quote == "bid" else (side < best):
                return f"{quote} {side} is better than any offer resting ({best})"
    return None


@pytest.mark.spec("v1/feed/get-tickers/bid-and-ask")
@pytest.mark.needs("taker_wallet")
def test_a_book_corridor_is_priced_from_its_resting_offers(
    target: Target,
    http: Client,
    reader: Client,
    integrator: Integrator,
    clock: ServiceClock,
    chain: VenueChain,
    venue: Venue,
    source: Wallet,
) -> None:
    chain = with_signature_transfer(chain, integrator.client, clock)
    found = book_pair(chain, reader)
    if found is None:
        pytest.skip(f"chain {chain.chain_id} has no v1-book corridor")
    base, target_symbol = found
    stable = next((s for s in (base, target_symbol) if s in SIZE_SYMBOLS), None)
    if stable is None:
        pytest.skip(f"{base}/{target_symbol} has no USD stablecoin side to size an order in")
    ticker_id = f"{published(base)}_{published(target_symbol)}"
    # Whose books are read: on a simulator every chain the pair is a BOOK corridor on (a key of
    # each environment); elsewhere the given v1 key's chain, so only the lower bounds hold.
    readers: list[tuple[VenueChain, Client]] = [(chain, integrator.client)]
    if target.controllable:
        pair = {base, target_symbol}
        # Each from a client address of its own: the reads count against no other test's
        # per-IP backstop.
        readers = [
            (c, v1_integrator(target.sim(), keyless_client(target, http), c.environment).client)
            for c in venue.chains.values()
            if any(
                k.mode == "BOOK" and {c.token_at(k.base).symbol, c.token_at(k.quote).symbol} == pair
                for k in c.corridors
            )
        ]

    def read_books() -> dict[tuple[int, str], list[str]]:
        return {
            (c.chain_id, quote): offer_prices(client, c, base, target_symbol, quote)
            for c, client in readers
            for quote in ("bid", "ask")
        }

    here = next(client for c, client in readers if c.chain_id == chain.chain_id)

    def both_sides() -> dict[str, Decimal] | None:
        """The worst offer of each side of the test chain's book, once both hold one."""
        worst: dict[str, Decimal] = {}
        for quote in ("bid", "ask"):
            prices = [number(p) for p in offer_prices(here, chain, base, target_symbol, quote)]
            if not prices:
                return None
            worst[quote] = min(prices) if quote == "bid" else max(prices)
        return worst

    if target.is_simulator:
        # The fleet keeps asks on both sides; another test may have moved the clock past them
        # or hold them in a swap for a while, and the fleet tops them up within 20 s.
        worst = wait_for(both_sides, timeout=60, interval=1, what=f"offers on {ticker_id}")
    else:
        found_worst = both_sides()
        if found_worst is None:
            pytest.skip(f"{ticker_id} has no resting offer on a side to price an order against")
        worst = found_worst
    maker, placed = rest_worse_than_the_book(
        integrator, clock, chain, source, base, target_symbol, stable, worst
    )
    problems: list[str] = []
    previous: list[dict[tuple[int, str], list[str]]] = []  # the books the last probe read

    def consistent() -> dict[str, Any] | None:
        # The ticker counts when the books read before and after it are the same: it was
        # built (or cached, a few seconds) while the book was as read.
        ticker = get_ticker(reader, ticker_id)
        books = read_books()
        unchanged = previous == [books]
        previous[:] = [books]
        if not unchanged:
            return None
        for quote in ("bid", "ask"):
            if not any(prices for (_, q), prices in books.items() if q == quote):
                return None  # a swap holds (or another test's clock expired) every offer
        problem = priced_within(ticker, books, every_chain=target.controllable)
        if problem is not None:
            problems.append(f"{ticker_id}: {problem}")
            return None
        return ticker

    paced = integrator.client.pacing is not None  # a shared key: a read a second at most
    try:
        wait_for(
            consistent,
            timeout=90 if paced else 60,
            interval=2.5,  # past the feed's cache period (2 s here), at a few reads a second
            what=f"{ticker_id} priced from its book",
        )
    except AssertionError as exc:
        raise AssertionError(
            f"{exc}; last seen: {problems[-1] if problems else 'no stable read'}"
        ) from None
    finally:
        for order in placed:  # the maker's early cancel: nothing of the test's is left resting
            invalidate_nonce(chain, maker, order.nonce)
