"""The price ladder (GET /v2/rfq/levels) and the preview (POST /v2/rfq/preview): public,
indicative, built from the makers' published levels, fee included, locking nothing (spec
1-rfq-v2 "Price ladder", "Preview").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from eth_account import Account

from conformance.calls.control import FAST, Fleet, Janitor, Liquidity
from conformance.calls.rfq_calls import (
    expect_quoted,
    keyless_client,
    ladder,
    ladder_pair,
    preview,
    request_quote,
    rfq_body,
    wait_ladder,
)
from conformance.checks.assertions import ROUTING_FIELDS, atomic, fee_on, iso_seconds, rate_ray
from conformance.checks.resource_checks import (
    LADDER_FIELDS,
    PAIR_FIELDS,
    assert_ladder_points,
    assert_preview,
    ladder_directions,
)
from conformance.deployment.funding import fund_wallet
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import Venue, VenueChain
from conformance.wire.chain import wait_for
from conformance.wire.client import Client, on_one_connection
from conformance.wire.response_checks import assert_data, assert_error, parse_iso_utc
from rfqkit.wallets import Wallet


@pytest.fixture
def http(http: Client) -> Iterator[Client]:
    """One instance's counts and cache: conftest.py `on_one_connection`."""
    yield from on_one_connection(http)


CHAIN = 97


@pytest.fixture
def market(trader: Client) -> Client:
    """A keyed client for many public calls (on a simulator a key of its own, unlimited; the
    given key elsewhere, paced)."""
    return trader


def _preview_body(chain: VenueChain, pair: dict[str, Any], **amounts: Any) -> dict[str, Any]:
    body = {"chainId": chain.chain_id, "sellToken": pair["sellToken"], "buyToken": pair["buyToken"]}
    body.update({k: str(v) for k, v in amounts.items()})
    return body


# -- the ladder ---------------------------------------------------------------------------


@pytest.mark.spec(
    "rfq/endpoints/get-v2-rfq-levels",
    "rfq/auth/api-keys/fully-public",
    "rfq/resources/price-ladder/fields",
    "rfq/resources/price-ladder/each-pair-selltoken-buytoken",
    "rfq/resources/price-ladder/every-pair-chain-appears",
    "rfq/resources/price-ladder/up-nine-indicative-points",
    "rfq/resources/price-ladder/points-not-firm",
    "rfq/overview/conventions/amounts-base-10-strings-atomic",
    "rfq/overview/conventions/timestamps-iso-8601-utc-except",
    "rfq/endpoints/request-body/below-minimum-size-400",
)
@pytest.mark.parametrize("chain_id", [97, 56])
def test_ladder_lists_every_pair_both_ways_with_increasing_points(
    target: Target,
    clock: ServiceClock,
    http: Client,
    market: Client,
    venue: Venue,
    liquidity: Liquidity,
    chain_id: int,
) -> None:
    chain = venue.chain(chain_id)

    def every_direction_quotable(data: dict[str, Any]) -> bool:
        depths = {(p["sellToken"], p["buyToken"]): p["maxSellAmount"] for p in data["pairs"]}
        return all(depths.get(d, "0") != "0" for d in chain.rfq_directions())

    # The ladder is cached about 2 s: one built while levels were stale (e.g. just after an
    # earlier test's clock advance or makers going offline) is served until it lapses.
    wait_ladder(market, chain_id, every_direction_quotable, what="levels on every pair")
    public = keyless_client(target, http)  # no credential needed
    data = assert_data(public.get("/v2/rfq/levels", params={"chainId": chain_id}))
    assert set(data) >= LADDER_FIELDS, sorted(data)
    assert data["chainId"] == chain_id, data
    as_of = parse_iso_utc(data["asOf"]).timestamp()
    now = clock.now_ms() / 1000
    assert now - 3.0 <= as_of <= now + 0.5, (data["asOf"], now)
    directions = ladder_directions(data)
    assert chain.rfq_directions() <= directions, "every RFQ pair appears in both directions"
    for pair in data["pairs"]:
        if (pair["sellToken"], pair["buyToken"]) not in chain.rfq_directions():
            continue
        assert set(pair) >= PAIR_FIELDS, sorted(pair)
        sell, buy = chain.token_at(pair["sellToken"]), chain.token_at(pair["buyToken"])
        assert pair["sellDecimals"] == sell.decimals, pair
        assert pair["buyDecimals"] == buy.decimals, pair
        levels = pair["levels"]
        assert 1 <= len(levels) <= 9, f"{sell.symbol}->{buy.symbol}: {len(levels)} points"
        previous = assert_ladder_points(levels)
        assert atomic(pair["maxSellAmount"]) == previous[0], "the last point is the depth"
        # minSellAmount is the smallest firm size: one unit less is below the minimum.
        minimum = atomic(pair["minSellAmount"])
        assert minimum >= sell.units(chain.min_size), pair
        at_min = preview(market, _preview_body(chain, pair, sellAmount=minimum))
        assert at_min["status"] in ("preview", "no_quote"), at_min
        under = market.post(
            "/v2/rfq/preview", json=_preview_body(chain, pair, sellAmount=minimum - 1)
        )
        error = assert_error(under, 400, "invalid_request", "below_minimum")
        assert error["details"]["minimum"] == str(minimum), error


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/resources/price-ladder/up-nine-indicative-points",
    "rfq/resources/preview/numbers-come-makers-latest",
    "rfq/resources/preview/fields",
)
def test_ladder_points_include_the_fee(market: Client, chain: VenueChain, fleet: Fleet) -> None:
    # One maker: the ladder is its own curve, plus the protocol fee on the sell side.
    fleet.only({"charlie": FAST})
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")

    mismatches: list[str] = []

    def consistent() -> bool | None:
        """The ladder (cached up to 2 s) and previews of its points, from the same levels.
        Retried while charlie's levels move (e.g. an earlier test's quote lapsing)."""
        pair = ladder_pair(ladder(market, CHAIN), usdt.address, ngns.address)
        probe = preview(market, _preview_body(chain, pair, sellAmount=usdt.units(1)))
        if pair["maxSellAmount"] != probe.get("availableSellAmount"):
            mismatches[:] = [f"ladder depth {pair['maxSellAmount']} vs preview {probe}"]
            return None  # not yet charlie's levels alone, or they moved
        for point in pair["levels"][::4]:
            gross = int(point["sellAmount"])
            shown = preview(market, _preview_body(chain, pair, sellAmount=gross))
            assert shown["status"] == "preview", shown
            assert shown["takerPays"] == str(gross), "a ladder point's sellAmount is what leaves"
            net = gross - int(shown["feeAmount"])
            assert int(shown["feeAmount"]) == fee_on(net), shown
            if shown["buyAmount"] != point["buyAmount"]:
                mismatches[:] = [f"point {point} vs preview {shown}"]
                return None
        return True

    try:
        wait_for(consistent, interval=0.5, what="ladder points that previews reproduce")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {mismatches}") from None


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/resources/price-ladder/ladder-cached-about-2",
    "rfq/limits/ladder-cache",
    "rfq/resources/price-ladder/fields",
)
def test_ladder_is_cached_about_two_seconds(sim: SimControl, market: Client, fleet: Fleet) -> None:
    first = ladder(market, CHAIN)
    second = ladder(market, CHAIN)
    if second["asOf"] != first["asOf"]:  # the first one was at the end of its life
        first, second = second, ladder(market, CHAIN)
    assert second == first, "within the cache window the same ladder is served"
    sim.advance(3)
    later = ladder(market, CHAIN)
    assert iso_seconds(later["asOf"]) >= iso_seconds(first["asOf"]) + 2.0, (first, later)


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/resources/price-ladder/pair-no-quotable-depth",
    "rfq/resources/no-quote/no_makers_online",
    "rfq/resources/preview/fields",
)
def test_ladder_is_empty_when_every_maker_is_offline(
    market: Client, venue: Venue, fleet: Fleet
) -> None:
    fleet.only({})

    def empty(data: dict[str, Any]) -> bool:
        return all(p["maxSellAmount"] == "0" for p in data["pairs"])

    for chain_id in (97, 56):
        data = wait_ladder(market, chain_id, empty, what=f"an empty ladder on {chain_id}")
        chain = venue.chain(chain_id)
        assert chain.rfq_directions() <= {(p["sellToken"], p["buyToken"]) for p in data["pairs"]}
        for pair in data["pairs"]:
            assert pair["levels"] == [], pair
            assert atomic(pair["minSellAmount"]) > 0, pair
    chain = venue.chain(CHAIN)
    usdt = chain.token("USDT")
    shown = preview(market, rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1)))
    assert shown["status"] == "no_quote", shown
    assert shown["reason"] == "no_makers_online", shown
    assert "availableSellAmount" not in shown, shown


# -- preview ------------------------------------------------------------------------------


@pytest.mark.spec(
    "rfq/endpoints/post-v2-rfq-preview",
    "rfq/overview/call-sequence/post-v2-rfq-preview",
    "rfq/auth/api-keys/fully-public",
    "rfq/auth/proof-of-control/rule-5",
    "rfq/resources/preview/fields",
    "rfq/resources/preview/numbers-come-makers-latest",
)
def test_preview_locks_nothing(
    target: Target,
    http: Client,
    market: Client,
    chain: VenueChain,
    source: Wallet,
    liquidity: Liquidity,
    kept: Janitor,
) -> None:
    usdc, usdt = chain.token("USDC"), chain.token("USDT")
    public = keyless_client(target, http)  # no key, no proof
    probe = preview(public, rfq_body(chain, "USDC", "USDT", sell_amount=usdc.units(10)))
    assert_preview(probe)
    depth = atomic(probe["availableSellAmount"])
    # The whole published depth, twice: nothing was reserved by the first.
    whole = rfq_body(chain, "USDC", "USDT", sell_amount=depth)
    for _ in range(2):
        shown = preview(market, whole)
        assert shown["status"] == "preview", shown
        assert shown["sellAmount"] == str(depth), shown
        taker_pays = atomic(shown["takerPays"])
        assert taker_pays <= depth, "takerPays never exceeds sellAmount"
        assert atomic(shown["buyAmount"]) > 0, shown
        assert atomic(shown["availableSellAmount"]) >= depth, shown
        assert int(shown["rateRay"]) == rate_ray(
            taker_pays, usdc.decimals, int(shown["buyAmount"]), usdt.decimals
        ), shown
    # ... and a firm quote is still served.
    taker = fund_wallet(chain, source, {usdc.address: usdc.units(10)}, native=0)
    body = rfq_body(chain, "USDC", "USDT", sell_amount=usdc.units(10), taker=taker.address)
    kept.keep(market, expect_quoted(request_quote(market, body)))


@pytest.mark.spec(
    "rfq/resources/preview/fields",
    "rfq/endpoints/post-v2-rfq-preview",
    "rfq/overview/properties-that-must-hold/exact-output-is-native",
)
def test_preview_exact_output(market: Client, chain: VenueChain, liquidity: Liquidity) -> None:
    ngns = chain.token("NGNS")
    want = ngns.units(5_000)
    shown = preview(market, rfq_body(chain, "USDT", "NGNS", buy_amount=want))
    assert_preview(shown)
    assert shown["buyAmount"] == str(want), "exact output: the asked buyAmount"
    taker_pays = atomic(shown["takerPays"])
    assert taker_pays <= atomic(shown["sellAmount"]), shown
    fee = atomic(shown["feeAmount"])
    assert 0 < fee <= fee_on(taker_pays - fee) + 4, shown  # 5 bps per maker leg, rounded down


@pytest.mark.spec(
    "rfq/resources/preview/fields",
    "rfq/resources/no-quote/no_restricted_liquidity",
    "rfq/resources/no-quote/no_valid_quote",
    "rfq/resources/no-quote/reserveduntil-retryafterms-appear-only",
)
def test_preview_no_quote_reasons(market: Client, chain: VenueChain, liquidity: Liquidity) -> None:
    usdt = chain.token("USDT")
    stranger = Account.create().address
    restricted = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=usdt.units(1),
        restrictedLiquidityWallets=[stranger],
    )
    shown = preview(market, restricted)
    assert shown["status"] == "no_quote", shown
    assert shown["reason"] == "no_restricted_liquidity", shown
    assert shown["routing"]["restrictionApplied"] is True, shown["routing"]
    assert shown["routing"]["targetMakerWallets"] == [stranger], shown["routing"]
    assert "availableSellAmount" not in shown, "the stranger publishes nothing"
    assert "reservedUntil" not in shown, shown

    probe = preview(market, rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1)))
    depth = atomic(probe["availableSellAmount"])
    beyond = preview(market, rfq_body(chain, "USDT", "NGNS", sell_amount=depth + usdt.units(1)))
    assert beyond["status"] == "no_quote", beyond
    assert beyond["reason"] == "no_valid_quote", beyond
    assert atomic(beyond["availableSellAmount"]) > 0, beyond
    assert set(beyond["routing"]) >= ROUTING_FIELDS, beyond
