"""Maker steering (spec 1-rfq-v2 "Request body": preferredLiquidityWallets,
restrictedLiquidityWallets; "Limits": steering lists): preferred makers are asked first and the
rest only if they do not cover the size within the preferred wait; restricted makers are the
only ones asked; both together, or more than ten wallets, is 400.

The fleet is narrowed per test (unneeded makers offline, the used ones fast and normal) and
restored afterwards; which makers were asked is read from their counters in /_sim/makers.
"""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account

from conformance.calls.control import FAST, Fleet, Janitor, Liquidity
from conformance.calls.rfq_calls import (
    cancel,
    eoa_proof,
    expect_no_quote,
    expect_quoted,
    keyless_client,
    preview,
    request_quote,
    rfq_body,
)
from conformance.checks.assertions import assert_firm_quote
from conformance.deployment.funding import fund_wallet
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error, assert_issues
from rfqkit.wallets import Wallet

CHAIN = 97


@pytest.fixture
def taker(chain: VenueChain, source: Wallet) -> Wallet:
    usdt = chain.token("USDT")
    return fund_wallet(chain, source, {usdt.address: usdt.units(20)}, native=0)


def _body(chain: VenueChain, taker: Wallet, **steering: Any) -> dict[str, Any]:
    usdt = chain.token("USDT")
    return rfq_body(
        chain, "USDT", "NGNS", sell_amount=usdt.units(1), taker=taker.address, **steering
    )


def _asked(fleet: Fleet, before: dict[str, int]) -> set[str]:
    after = fleet.rfqs_seen()
    return {name for name, count in after.items() if count > before.get(name, 0)}


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/endpoints/request-body/preferredliquiditywallets",
    "rfq/endpoints/request-body/rules",
    "rfq/overview/properties-that-must-hold/maker-steering-preferred-restricted",
    "rfq/overview/conventions/addresses-evm-addresses-lowercase",
    "rfq/resources/firm-quote/routing-object",
    "rfq/resources/firm-quote/routing",
)
def test_preferred_makers_that_cover_the_size_are_the_only_ones_asked(
    target: Target,
    sim: SimControl,
    http: Client,
    chain: VenueChain,
    taker: Wallet,
    fleet: Fleet,
    kept: Janitor,
) -> None:
    fleet.only({"alpha": FAST, "bravo": FAST})
    alpha = fleet.wallet("alpha")
    caller = keyless_client(target, http)  # steering works without a key
    before = fleet.rfqs_seen()
    body = _body(
        chain,
        taker,
        preferredLiquidityWallets=[alpha.lower(), alpha],
        takerProof=eoa_proof(sim, taker, CHAIN),
    )
    data = kept.keep(caller, request_quote(caller, body))
    checked = assert_firm_quote(
        chain,
        data,
        sell="USDT",
        buy="NGNS",
        taker=taker.address,
        sell_amount=chain.token("USDT").units(1),
    )
    assert checked.makers == [alpha], checked.makers
    assert data["routing"] == {
        "preferenceApplied": True,
        "restrictionApplied": False,
        "fallbackUsed": False,
        "targetMakerWallets": [alpha],  # deduped, checksummed
        "preferredQuotesReceived": 1,
        "openMarketQuotesReceived": 0,
    }, data["routing"]
    assert _asked(fleet, before) == {"alpha"}, "the rest are not asked when preferred cover"


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/endpoints/request-body/preferredliquiditywallets",
    "rfq/endpoints/request-body/rules",
    "rfq/overview/timing-defaults/preferred-wait",
    "rfq/resources/firm-quote/routing-object",
)
def test_preferred_makers_that_do_not_quote_fall_back_to_the_rest(
    trader: Client, chain: VenueChain, taker: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    fleet.only(
        {
            "alpha": FAST,
            "bravo": FAST,
            "delta": {"behaviour": "decline", "latency": {"kind": "fixed", "ms": 5}},
        }
    )
    delta = fleet.wallet("delta")
    before = fleet.rfqs_seen()
    body = _body(chain, taker, preferredLiquidityWallets=[delta])
    data = kept.keep(trader, request_quote(trader, body))
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=10**18
    )
    assert {fleet.name_of(m) for m in checked.makers} <= {"alpha", "bravo"}, checked.makers
    assert data["routing"] == {
        "preferenceApplied": True,
        "restrictionApplied": False,
        "fallbackUsed": True,
        "targetMakerWallets": [delta],
        "preferredQuotesReceived": 0,
        "openMarketQuotesReceived": 2,
    }, data["routing"]
    assert _asked(fleet, before) == {"alpha", "bravo", "delta"}

    # A preferred maker too slow for the head start (250 ms): the rest are asked as well, and
    # its late-but-in-budget quote still counts.
    fleet.patch("delta", behaviour="normal", latency={"kind": "fixed", "ms": 450})
    before = fleet.rfqs_seen()
    data = kept.keep(trader, request_quote(trader, body))
    assert data["status"] == "quoted", data
    assert data["routing"] == {
        "preferenceApplied": True,
        "restrictionApplied": False,
        "fallbackUsed": True,
        "targetMakerWallets": [delta],
        "preferredQuotesReceived": 1,
        "openMarketQuotesReceived": 2,
    }, data["routing"]
    assert _asked(fleet, before) == {"alpha", "bravo", "delta"}

    # A preferred wallet that is not a maker matches nothing: the open market answers.
    stranger = Account.create().address
    data = kept.keep(
        trader, request_quote(trader, _body(chain, taker, preferredLiquidityWallets=[stranger]))
    )
    assert data["status"] == "quoted", data
    routing = data["routing"]
    assert routing["preferenceApplied"] is True, routing
    assert routing["fallbackUsed"] is True, routing
    assert routing["targetMakerWallets"] == [stranger], routing
    assert routing["preferredQuotesReceived"] == 0, routing
    assert routing["openMarketQuotesReceived"] == 3, "alpha, bravo and (slow) delta"


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/endpoints/request-body/restrictedliquiditywallets",
    "rfq/endpoints/request-body/rules",
    "rfq/resources/no-quote/no_restricted_liquidity",
    "rfq/resources/firm-quote/routing-object",
)
def test_restricted_makers_are_the_only_ones_asked(
    trader: Client, chain: VenueChain, taker: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    fleet.only({"alpha": FAST, "bravo": FAST})
    bravo = fleet.wallet("bravo")
    before = fleet.rfqs_seen()
    body = _body(chain, taker, restrictedLiquidityWallets=[bravo.lower()])
    data = kept.keep(trader, request_quote(trader, body))
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=10**18
    )
    assert checked.makers == [bravo], checked.makers
    assert data["routing"] == {
        "preferenceApplied": False,
        "restrictionApplied": True,
        "fallbackUsed": False,
        "targetMakerWallets": [bravo],
        "preferredQuotesReceived": 1,
        "openMarketQuotesReceived": 0,
    }, data["routing"]
    assert _asked(fleet, before) == {"bravo"}

    # No fallback: when the restricted maker will not quote, nobody else is asked.
    fleet.patch("bravo", behaviour="decline")
    before = fleet.rfqs_seen()
    data = kept.keep(trader, request_quote(trader, body))
    expect_no_quote(data, "no_restricted_liquidity")
    assert data["routing"]["restrictionApplied"] is True, data["routing"]
    assert data["routing"]["fallbackUsed"] is False, data["routing"]
    assert _asked(fleet, before) == {"bravo"}


@pytest.mark.spec(
    "rfq/endpoints/request-body/rules",
    "rfq/errors/400-invalid_request",
    "rfq/endpoints/request-body/preferredliquiditywallets",
    "rfq/endpoints/request-body/restrictedliquiditywallets",
)
def test_both_steering_lists_together_are_400(
    trader: Client, chain: VenueChain, taker: Wallet, target: Target, request: pytest.FixtureRequest
) -> None:
    # On a simulator the lists name its makers and no maker may be asked; elsewhere any two
    # wallets show the 400 (which makers were asked is not visible from outside).
    fleet: Fleet | None = request.getfixturevalue("fleet") if target.controllable else None
    if fleet is not None:
        alpha, bravo = fleet.wallet("alpha"), fleet.wallet("bravo")
    else:
        alpha, bravo = Account.create().address, Account.create().address
    body = _body(
        chain, taker, preferredLiquidityWallets=[alpha], restrictedLiquidityWallets=[bravo]
    )
    asked_before = fleet.rfqs_seen() if fleet is not None else None
    reason = "steering_conflict" if fleet is not None else None  # rfqsim's details.reason
    assert_error(trader.post("/v2/rfq/request", json=body), 400, "invalid_request", reason)
    body.pop("taker")
    assert_error(trader.post("/v2/rfq/preview", json=body), 400, "invalid_request", reason)
    if fleet is not None:
        assert fleet.rfqs_seen() == asked_before


@pytest.mark.spec(
    "rfq/endpoints/request-body/restrictedliquiditywallets",
    "rfq/endpoints/request-body/preferredliquiditywallets",
    "rfq/endpoints/request-body/rules",
    "rfq/overview/properties-that-must-hold/maker-steering-preferred-restricted",
    "rfq/overview/conventions/addresses-evm-addresses-lowercase",
    "rfq/resources/firm-quote/routing-object",
)
def test_steering_to_a_maker_that_quoted_gets_that_makers_quote(
    trader: Client, chain: VenueChain, taker: Wallet, liquidity: Liquidity
) -> None:
    """Without control: the makers' wallets as any client learns them (the orders of a firm
    quote), then restricted and preferred lists naming that wallet."""

    def quoted(**steering: Any) -> dict[str, Any]:
        data = expect_quoted(request_quote(trader, _body(chain, taker, **steering)))
        assert_data(cancel(trader, str(data["rfqId"]), str(data["claimToken"])))  # free the slot
        return data

    first = quoted()
    maker = str(first["quote"]["orders"][0]["maker"])
    stranger = Account.create().address  # a wallet no maker uses: restricted, it adds nothing
    restricted = quoted(restrictedLiquidityWallets=f"{maker.lower()}, {stranger.lower()}")
    routing = restricted["routing"]
    assert routing["restrictionApplied"] is True, routing
    assert routing["preferenceApplied"] is False, routing
    assert routing["fallbackUsed"] is False, routing
    assert [w.lower() for w in routing["targetMakerWallets"]] == [maker.lower(), stranger.lower()]
    assert routing["openMarketQuotesReceived"] == 0, routing
    assert routing["preferredQuotesReceived"] >= 1, routing
    assert {o["maker"].lower() for o in restricted["quote"]["orders"]} == {maker.lower()}

    preferred = quoted(preferredLiquidityWallets=[maker.lower()])
    routing = preferred["routing"]
    assert routing["preferenceApplied"] is True, routing
    assert routing["restrictionApplied"] is False, routing
    assert [w.lower() for w in routing["targetMakerWallets"]] == [maker.lower()], routing


@pytest.mark.spec(
    "rfq/limits/steering-lists",
    "rfq/endpoints/request-body/preferredliquiditywallets",
    "rfq/endpoints/request-body/restrictedliquiditywallets",
    "rfq/errors/400-invalid_request",
    "rfq/errors/details-optional-either-issues",
)
@pytest.mark.parametrize("field", ["preferredLiquidityWallets", "restrictedLiquidityWallets"])
def test_more_than_ten_steering_wallets_are_400(
    trader: Client, chain: VenueChain, taker: Wallet, field: str
) -> None:
    wallets = [Account.create().address for _ in range(11)]
    for form in (wallets, ",".join(wallets)):
        for path in ("/v2/rfq/request", "/v2/rfq/preview"):
            body = _body(chain, taker, **{field: form})
            if path.endswith("preview"):
                body.pop("taker")
            error = assert_error(trader.post(path, json=body), 400, "invalid_request")
            assert_issues(error, field)
    # Ten is the maximum, not over it (preview: nothing is locked).
    ten = _body(chain, taker, **{field: wallets[:10]})
    ten.pop("taker")
    assert preview(trader, ten)["status"] in ("preview", "no_quote")


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/endpoints/request-body/preferredliquiditywallets",
    "rfq/endpoints/request-body/restrictedliquiditywallets",
    "rfq/endpoints/request-body/rules",
    "rfq/overview/conventions/addresses-evm-addresses-lowercase",
)
def test_steering_lists_accept_a_comma_separated_string(
    trader: Client, chain: VenueChain, taker: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    fleet.only({"alpha": FAST, "bravo": FAST, "charlie": FAST})
    alpha, bravo, charlie = (fleet.wallet(n) for n in ("alpha", "bravo", "charlie"))
    before = fleet.rfqs_seen()
    restricted = f"{alpha.lower()}, {bravo.lower()},{alpha}"
    data = kept.keep(
        trader, request_quote(trader, _body(chain, taker, restrictedLiquidityWallets=restricted))
    )
    assert data["status"] == "quoted", data
    routing = data["routing"]
    assert routing["restrictionApplied"] is True, routing
    assert routing["targetMakerWallets"] == [alpha, bravo], routing
    assert routing["preferredQuotesReceived"] == 2, routing
    assert routing["openMarketQuotesReceived"] == 0, routing
    assert _asked(fleet, before) == {"alpha", "bravo"}, "charlie is not on the list"
    assert data["quote"]["orders"][0]["maker"] in (alpha, bravo), data["quote"]

    preferred = f"{charlie.lower()}"
    data = kept.keep(
        trader, request_quote(trader, _body(chain, taker, preferredLiquidityWallets=preferred))
    )
    assert data["status"] == "quoted", data
    assert data["routing"]["preferenceApplied"] is True, data["routing"]
    assert data["routing"]["targetMakerWallets"] == [charlie], data["routing"]
    assert data["routing"]["fallbackUsed"] is False, data["routing"]
    assert data["quote"]["orders"][0]["maker"] == charlie, data["quote"]

    shown_body = _body(chain, taker, restrictedLiquidityWallets=restricted)
    shown_body.pop("taker")
    shown = preview(trader, shown_body)
    assert shown["status"] == "preview", shown
    assert shown["routing"]["targetMakerWallets"] == [alpha, bravo], shown["routing"]
