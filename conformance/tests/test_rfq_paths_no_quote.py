"""The ways POST /v2/rfq/request ends in a no-quote (spec 1-rfq-v2 "No-quote"): no maker
online, no restricted liquidity (a stranger, a declining or an offline maker as the only
wallet allowed), no valid quote when no maker answers usably (silent, late, declining, a bad
signature, underfunded) although the preview still shows the size, a size above the published
depth (all or nothing) while a size within it quotes, and ``reservedUntil`` / ``retryAfterMs``
naming liquidity held by another caller's live quote (never the caller's own), on the request
and on the preview. Every test uses a key of its own, and every test that reconfigures the
simulated makers restores them, pass or fail.
"""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account

from conformance.calls.control import FAST, Fleet, Janitor
from conformance.calls.rfq_calls import (
    eoa_proof,
    expect_no_quote,
    expect_quoted,
    get_record,
    keyed_client,
    keyless_client,
    new_key,
    preview,
    request_quote,
    rfq_body,
)
from conformance.checks.assertions import atomic, iso_seconds
from conformance.checks.resource_checks import (
    NO_QUOTE_FIELDS,
    NO_QUOTE_OPTIONAL,
    assert_no_quote,
    assert_reserved_consistent,
)
from conformance.deployment.funding import fund_wallet
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import wait_for
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, parse_iso_utc
from rfqkit.wallets import Wallet

OUTSTANDING_CAP = 4  # spec 1-rfq-v2 "Limits": outstanding RFQs per client IP without a key


def _no_quote_shape(data: dict[str, Any]) -> None:
    assert set(data) <= NO_QUOTE_FIELDS | NO_QUOTE_OPTIONAL, sorted(data)
    assert_no_quote(data)


def _empty_book(data: dict[str, Any]) -> None:
    """Nothing can hold liquidity for this request (no eligible maker at all)."""
    assert "reservedUntil" not in data, "no other caller holds liquidity"
    assert "retryAfterMs" not in data, "no other caller holds liquidity"


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/resources/no-quote/fields",
    "rfq/resources/no-quote/no_makers_online",
    "rfq/resources/no-quote/reserveduntil-retryafterms-appear-only",
    "rfq/endpoints/request-body/behaviour-3",
    "rfq/errors/no-quote-200-branch-data-status",
    "rfq/states/soliciting-maker-replies-within-reply-budget-to-no_quote",
    "rfq/resources/rfq-record/noquotereason",
    "rfq/resources/preview/fields",
)
def test_no_makers_online(
    sim: SimControl,
    http: Client,
    trader: Client,
    chain: VenueChain,
    source: Wallet,
    fleet: Fleet,
    kept: Janitor,
) -> None:
    usdt = chain.token("USDT")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(5)}, native=0)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1), taker=taker.address)
    # Another caller's live quote in the same direction (as other tests may leave behind):
    # with no maker online it holds nothing that could serve this request.
    other = keyed_client(http, new_key(sim, "test"))
    kept.keep(other, expect_quoted(request_quote(other, body)))
    fleet.only({})  # every maker offline
    data = expect_no_quote(request_quote(trader, body), "no_makers_online")
    _no_quote_shape(data)
    assert "availableSellAmount" not in data, "nothing is published"
    assert "availableBuyAmount" not in data, "nothing is published"
    _empty_book(data)
    record = get_record(trader, data["rfqId"])
    assert record["status"] == "no_quote", record
    assert record["noQuoteReason"] == "no_makers_online", record
    assert record["sellAmount"] == str(usdt.units(1)), "no winner: the request is echoed"
    body.pop("taker")
    shown = preview(trader, body)
    assert shown["status"] == "no_quote", shown
    assert shown["reason"] == "no_makers_online", shown
    assert "availableSellAmount" not in shown, shown
    _empty_book(shown)


RESTRICTED_RULES = (
    "rfq/resources/no-quote/no_restricted_liquidity",
    "rfq/resources/no-quote/fields",
    "rfq/endpoints/request-body/rules",
    "rfq/endpoints/request-body/restrictedliquiditywallets",
    "rfq/resources/firm-quote/routing-object",
)


def _restricted_to(trader: Client, chain: VenueChain, taker: Wallet, wallet: str) -> dict[str, Any]:
    """The no-quote of a firm request restricted to ``wallet`` alone, its routing checked."""
    usdt = chain.token("USDT")
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=usdt.units(1),
        taker=taker.address,
        restrictedLiquidityWallets=[wallet.lower()],
    )
    data = request_quote(trader, body)
    assert data.get("status") == "no_quote", f"{wallet}: {data!r}"
    assert data.get("reason") == "no_restricted_liquidity", f"{wallet}: {data!r}"
    _no_quote_shape(data)
    routing = data["routing"]
    assert routing["restrictionApplied"] is True, routing
    assert routing["preferenceApplied"] is False, routing
    assert routing["fallbackUsed"] is False, routing
    assert routing["targetMakerWallets"] == [wallet], routing
    assert routing["preferredQuotesReceived"] == 0, routing
    assert routing["openMarketQuotesReceived"] == 0, routing
    return data


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(*RESTRICTED_RULES)
def test_no_restricted_liquidity_from_a_wallet_that_is_no_maker(
    trader: Client, chain: VenueChain, source: Wallet
) -> None:
    usdt = chain.token("USDT")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(5)}, native=0)
    # Nothing can be held by a wallet that is not a maker: the book is empty.
    _empty_book(_restricted_to(trader, chain, taker, Account.create().address))


@pytest.mark.needs("loopback")
@pytest.mark.spec(
    "rfq/states/soliciting-maker-replies-within-reply-budget-to-no_quote",
    "rfq/limits/slot-lifetime",
    "rfq/resources/rfq-record/noquotereason",
)
def test_a_no_quote_is_terminal_and_gives_its_slot_back_at_once(
    target: Target, http: Client, clock: ServiceClock, chain: VenueChain
) -> None:
    # Keyless from a client IP of its own: the outstanding-RFQ cap (per client IP) is this
    # test's alone. Nobody prices a trade restricted to a wallet that is no maker; exact output
    # checks the taker's funds only after pricing, so a fresh wallet with nothing will do.
    caller = keyless_client(target, http)
    taker = Wallet.create()
    answered = []
    # One more than the cap, back to back: each no-quote released its slot before the next.
    for _ in range(OUTSTANDING_CAP + 1):
        body = rfq_body(
            chain,
            "USDT",
            "NGNS",
            buy_amount=chain.token("NGNS").units(2),
            taker=taker.address,
            proof=eoa_proof(clock, taker, chain.chain_id),
            restrictedLiquidityWallets=[Account.create().address],
        )
        data = expect_no_quote(request_quote(caller, body), "no_restricted_liquidity")
        _no_quote_shape(data)
        answered.append(data)
    # Terminal: every record still says no_quote once the later requests were answered.
    for data in answered:
        record = get_record(caller, data["rfqId"], data["claimToken"])
        assert record["status"] == "no_quote", record
        assert record["noQuoteReason"] == "no_restricted_liquidity", record


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(*RESTRICTED_RULES)
def test_no_restricted_liquidity_from_a_declining_or_offline_maker(
    trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet
) -> None:
    usdt = chain.token("USDT")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(5)}, native=0)
    fleet.patch("bravo", behaviour="decline", latency={"kind": "fixed", "ms": 5})
    fleet.patch("charlie", online=False)
    for maker in ("bravo", "charlie"):
        assert_reserved_consistent(_restricted_to(trader, chain, taker, fleet.wallet(maker)))


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/resources/no-quote/no_valid_quote",
    "rfq/resources/no-quote/fields",
    "rfq/resources/preview/preview-not-promise-size",
    "rfq/overview/timing-defaults/reply-budget",
    "rfq/limits/reply-budget",
    "rfq/endpoints/request-body/behaviour-1",
    "rfq/overview/call-sequence/post-v2-rfq-request",
)
@pytest.mark.parametrize("behaviour", ["silent", "late", "decline", "bad_signature", "underfunded"])
def test_no_valid_quote_when_no_maker_answers_usably(
    trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet, kept: Janitor, behaviour: str
) -> None:
    usdt = chain.token("USDT")
    fixed = {"behaviour": behaviour, "latency": {"kind": "fixed", "ms": 5}}
    if behaviour == "underfunded":
        # It quotes ten times what it holds: only a size above its real balance shows it
        # (about 1,000,000 NGNS, i.e. 625 USDT). One maker only, so no bundle can form.
        fleet.only({"alpha": {**fixed, "max_inventory_fraction": 1}})
        size = usdt.units(800)
    else:
        fleet.only(dict.fromkeys(fleet.names, fixed))
        size = usdt.units(1)
    taker = fund_wallet(chain, source, {usdt.address: size}, native=0)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=size, taker=taker.address)
    # The makers' published levels still cover the size: the preview is not a promise.
    # (Polled: the reconfigured makers republish their levels within about a second.)
    indicative_body = {k: v for k, v in body.items() if k != "taker"}

    def indicative() -> dict[str, Any] | None:
        shown = preview(trader, indicative_body)
        return shown if shown["status"] == "preview" else None

    wait_for(indicative, interval=0.2, what="a preview covering the size")
    resp = trader.post("/v2/rfq/request", json=body, timeout=75)
    data = expect_no_quote(kept.keep(trader, assert_data(resp)), "no_valid_quote")
    _no_quote_shape(data)
    assert_reserved_consistent(data)
    # Blocks at most about the reply budget (750 ms), even when makers never answer.
    assert resp.elapsed < 0.75 + 1.0, f"the request held {resp.elapsed:.2f}s"
    # The makers still publish levels: the published depth is reported.
    assert atomic(data.get("availableSellAmount"), "availableSellAmount") > 0, data
    assert atomic(data.get("availableBuyAmount"), "availableBuyAmount") > 0, data
    record = get_record(trader, data["rfqId"])
    assert record["status"] == "no_quote", record
    assert record["noQuoteReason"] == "no_valid_quote", record


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/endpoints/request-body/behaviour-4",
    "rfq/overview/properties-that-must-hold/all-or-nothing",
    "rfq/resources/no-quote/no_valid_quote",
    "rfq/resources/no-quote/fields",
)
def test_size_above_depth_is_no_quote_and_a_size_within_quotes(
    trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    usdc = chain.token("USDC")
    fleet.only({"alpha": {**FAST, "max_inventory_fraction": 0.001}})  # about 1,000 USDT

    def shallow() -> int | None:
        body = rfq_body(chain, "USDC", "USDT", sell_amount=usdc.units(1))
        depth = int(preview(trader, body).get("availableSellAmount") or 0)
        return depth if 0 < depth < usdc.units(1_200) else None

    depth = wait_for(shallow, interval=0.3, what="alpha's shallower levels")
    taker = fund_wallet(chain, source, {usdc.address: 2 * depth}, native=0)
    too_big = rfq_body(chain, "USDC", "USDT", sell_amount=2 * depth, taker=taker.address)
    data = expect_no_quote(request_quote(trader, too_big), "no_valid_quote")  # no partial fill
    _no_quote_shape(data)
    assert_reserved_consistent(data)
    available = atomic(data.get("availableSellAmount"), "availableSellAmount")
    assert available == depth, (available, depth)
    # Retry within the published depth: a firm quote for the whole of it.
    within = rfq_body(chain, "USDC", "USDT", sell_amount=available, taker=taker.address)
    kept.keep(trader, expect_quoted(request_quote(trader, within)))


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/resources/no-quote/reserveduntil-retryafterms-appear-only",
    "rfq/resources/no-quote/fields",
    "rfq/resources/preview/fields",
)
def test_no_quote_names_liquidity_held_by_another_callers_quote(
    sim: SimControl, http: Client, chain: VenueChain, source: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    wbnb, usdt = chain.token("WBNB"), chain.token("USDT")
    first = keyed_client(http, new_key(sim, "test"))
    second = keyed_client(http, new_key(sim, "test"))
    # One maker showing all it holds: a quote for 60% of it leaves too little for another.
    fleet.only({"alpha": {**FAST, "max_inventory_fraction": 1}})
    holds = chain.rpc().balance_of(usdt.address, fleet.wallet("alpha"))

    def whole_depth() -> int | None:
        # Far beyond the depth: the no-quote reports alpha's whole published depth.
        body = rfq_body(chain, "WBNB", "USDT", buy_amount=10 * holds)
        shown = preview(first, body)
        sell, buy = (int(shown.get(f"available{s}Amount") or 0) for s in ("Sell", "Buy"))
        return sell if holds // 2 < buy <= holds else None

    depth = wait_for(whole_depth, interval=0.3, what="alpha's full levels")
    size = depth * 6 // 10
    mine = fund_wallet(chain, source, {wbnb.address: 2 * size}, native=0)
    theirs = fund_wallet(chain, source, {wbnb.address: size}, native=0)
    body = rfq_body(chain, "WBNB", "USDT", sell_amount=size, taker=mine.address)
    held = kept.keep(first, expect_quoted(request_quote(first, body)))

    data = request_quote(second, {**body, "taker": theirs.address})
    kept.keep(second, data)
    expect_no_quote(data, "no_valid_quote")
    _no_quote_shape(data)
    assert "reservedUntil" in data, f"another caller's live quote holds the liquidity: {data}"
    assert "retryAfterMs" in data, data
    until = iso_seconds(data["reservedUntil"])
    assert until > sim.now_ms() / 1000, data
    assert until <= iso_seconds(held["quote"]["latestOrderDeadline"]), (data, held["quote"])
    assert isinstance(data["retryAfterMs"], int), data
    assert 0 < data["retryAfterMs"] <= 125_000, data

    # The caller's own quote is not another caller's: no reservedUntil for it.
    own = request_quote(first, body)
    kept.keep(first, own)
    expect_no_quote(own, "no_valid_quote")
    assert "reservedUntil" not in own, own
    assert "retryAfterMs" not in own, own

    # The same rule on preview, once the maker's levels show the held inventory.
    body.pop("taker")

    def previewed_no_quote() -> dict[str, Any] | None:
        shown = preview(second, body)
        return shown if shown["status"] == "no_quote" else None

    shown = wait_for(previewed_no_quote, interval=0.3, what="a no_quote preview")
    assert "reservedUntil" in shown, shown
    assert "retryAfterMs" in shown, shown
    parse_iso_utc(shown["reservedUntil"])
