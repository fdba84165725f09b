"""GET /v1/order-book and GET /v1/quote (spec 3 "Order-book semantics"), read by a v1 integrator
against resting orders of its own makers (steered to them, since the simulated fleet rests asks
on the BOOK corridor too): live, funded, executable offers for one direction, best rate first,
with aggregate capacities and no signed payloads; an order whose maker spent its funds after
posting is gone from the very next read; the two pricing frames with 6- and 18-decimal tokens.

Without control the integrator is the given ``key:v1`` and the makers are funded from the given
taker wallet; the shapes are the spec's (conformance.calls.v1_target).
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.calls.v1_book import (
    Integrator,
    book_rate,
    funded_maker,
    get_order,
    order_book,
    place,
    rate,
)
from conformance.calls.v1_target import (
    Shapes,
    book_chain,  # noqa: F401  (overrides the chain fixture)
)
from conformance.deployment.service_clock import Clocked
from conformance.deployment.target import Target
from conformance.deployment.venue import Token, VenueChain
from conformance.wire.response_checks import assert_data, assert_error, parse_iso_utc
from rfqkit.wallets import Wallet

pytestmark = pytest.mark.needs("key:v1")


BOOK_FIELDS = {
    "chainId",
    "sellToken",
    "buyToken",
    "blockNumber",
    "asOf",
    "sellCapacity",
    "buyCapacity",
    "offers",
}
OFFER_FIELDS = {"maker", "sellAmount", "buyAmount", "feeAmount", "rateRay", "deadline"}


def _ngns_for_usdc(
    integrator: Integrator,
    clock: Clocked,
    chain: VenueChain,
    source: Wallet,
    rates: list[int],
) -> list[tuple[Wallet, str]]:
    """One maker per rate, each selling `rate` NGNS for 1 USDC; (maker, order id)."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    out = []
    for ngns_per_usdc in rates:
        maker = funded_maker(chain, source, {ngns: ngns.units(ngns_per_usdc)})
        placed = place(
            integrator,
            clock,
            chain,
            maker,
            ngns,
            ngns.units(ngns_per_usdc),
            usdc,
            buy_amount=usdc.units(1),
        )
        out.append((maker, placed.order_id))
    return out


def _restricted(makers: list[tuple[Wallet, str]]) -> str:
    return ",".join(m.address for m, _ in makers)


@pytest.mark.spec(
    "v1/resources/order-book-semantics/get-v1-order-book-returns",
    "v1/endpoints/get-v1-order-book",
    "v1/endpoints/steering-parameters",
    "v1/resources/limit-order-prepare-response/fields-corridor-list-items",
    "v1/overview/conventions",
)
@pytest.mark.needs("taker_wallet")
def test_the_order_book_lists_executable_offers_best_rate_first_without_payloads(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    shapes = Shapes(target)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    makers = _ngns_for_usdc(integrator, clock, chain, source, [1450, 1500, 1480])
    resp = integrator.client.get(
        "/v1/order-book",
        params={
            "chainId": chain.chain_id,
            "sellToken": usdc.address,  # the taker sells USDC
            "buyToken": ngns.address,  # and receives NGNS
            "restrictedLiquidityWallets": _restricted(makers),  # comma-separated, as documented
        },
    )
    book = assert_data(resp)
    shapes.fields(book, BOOK_FIELDS)
    assert book["chainId"] == chain.chain_id
    shapes.address(book["sellToken"], usdc.address)
    shapes.address(book["buyToken"], ngns.address)
    parse_iso_utc(book["asOf"])
    offers = book["offers"]
    shapes.addresses([o["maker"] for o in offers], [makers[i][0].address for i in (1, 2, 0)])
    for offer, ngns_per_usdc in zip(offers, (1500, 1480, 1450), strict=True):
        shapes.fields(offer, OFFER_FIELDS)
        buy = usdc.units(1)
        shapes.fee(offer["feeAmount"], buy)
        assert offer["sellAmount"] == str(buy + int(offer["feeAmount"])), "output plus fee"
        assert offer["buyAmount"] == str(ngns.units(ngns_per_usdc))
        assert offer["rateRay"] == str(ngns_per_usdc * 10**27)
        parse_iso_utc(offer["deadline"])
    assert book["sellCapacity"] == str(sum(int(o["sellAmount"]) for o in offers))
    assert book["buyCapacity"] == str(sum(int(o["buyAmount"]) for o in offers))
    text = resp.raw.decode().lower()
    assert "signature" not in text, "signed payloads are omitted"
    assert "encodedorder" not in text, "signed payloads are omitted"
    # Preferred: that maker first, then everyone else (here the fleet's asks too).
    preferred = order_book(
        integrator.client, chain, usdc, ngns, preferredLiquidityWallets=makers[0][0].address
    )
    shapes.address(preferred["offers"][0]["maker"], makers[0][0].address)
    assert len(preferred["offers"]) >= 3


@pytest.mark.spec(
    "v1/resources/order-book-semantics/get-v1-order-book-returns",
    "v1/endpoints/get-v1-quote",
)
@pytest.mark.needs("taker_wallet")
def test_an_order_whose_maker_spent_its_funds_is_never_offered(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    shapes = Shapes(target)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    makers = _ngns_for_usdc(integrator, clock, chain, source, [1500, 1450])
    steer = {"restrictedLiquidityWallets": _restricted(makers)}
    both = order_book(integrator.client, chain, usdc, ngns, **steer)["offers"]
    assert len(both) == 2
    enough_for_both = sum(int(o["sellAmount"]) for o in both)  # 2 * 1_000_500 on rfqsim
    spender, order_id = makers[0]
    node = chain.rpc()
    node.transfer(spender, ngns.address, source.address, 1)  # one unit short now
    book = order_book(integrator.client, chain, usdc, ngns, **steer)
    shapes.addresses([o["maker"] for o in book["offers"]], [makers[1][0].address])  # live
    quoted = assert_data(
        integrator.client.get(
            "/v1/quote",
            params={
                "chainId": chain.chain_id,
                "sellToken": usdc.address,
                "buyToken": ngns.address,
                "sellAmount": str(enough_for_both),
                **steer,
            },
        )
    )
    shapes.addresses([o["maker"] for o in quoted["orders"]], [makers[1][0].address])
    # The order itself is still ACTIVE (its nonce is unspent): only the offer is withheld.
    assert get_order(integrator.client, order_id)["status"] == "ACTIVE"


def _one_order(
    integrator: Integrator,
    clock: Clocked,
    chain: VenueChain,
    source: Wallet,
    sell: Token,
    sell_amount: int,
    buy: Token,
    buy_amount: int,
) -> dict[str, Any]:
    maker = funded_maker(chain, source, {sell: sell_amount})
    placed = place(integrator, clock, chain, maker, sell, sell_amount, buy, buy_amount=buy_amount)
    return get_order(integrator.client, placed.order_id)


@pytest.mark.spec(
    "v1/resources/limit-order-record/rateray",
    "v1/resources/limit-order-record/executionrateray",
    "v1/resources/limit-order-quote-response/rates-maker-frame-buytoken-per-selltoken",
    "v1/overview/conventions",
)
@pytest.mark.needs("taker_wallet")
def test_both_pricing_frames_with_6_and_18_decimal_tokens(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")  # 18 and 6 decimals
    ray = 10**27
    # The maker sells 1 USDT (18 dp) for 1700 NGNS (6 dp).
    usdt_side = _one_order(
        integrator, clock, chain, source, usdt, usdt.units(1), ngns, ngns.units(1700)
    )
    assert usdt_side["rateRay"] == str(ray // 1700)  # book: USDT per NGNS
    assert usdt_side["executionRateRay"] == str(1700 * ray)  # maker frame: NGNS per USDT
    # The maker sells 1500 NGNS (6 dp) for 1 USDT (18 dp).
    ngns_side = _one_order(
        integrator, clock, chain, source, ngns, ngns.units(1500), usdt, usdt.units(1)
    )
    assert ngns_side["rateRay"] == str(1500 * ray)  # book: NGNS per USDT
    assert ngns_side["executionRateRay"] == str(ray // 1500)  # maker frame: USDT per NGNS
    # Odd amounts: exactly the decimal-normalised, rounded-down formulas.
    odd = _one_order(
        integrator, clock, chain, source, usdt, 123_456_789_012_345_678, ngns, 210_987_654
    )
    assert odd["rateRay"] == str(book_rate(123_456_789_012_345_678, 18, 210_987_654, 6))
    assert odd["executionRateRay"] == str(rate(123_456_789_012_345_678, 18, 210_987_654, 6))
    # The order book shows the book rate of the order: what a taker receives per unit it pays
    # (before the fee), here NGNS per USDT for a taker selling USDT.
    book = order_book(
        integrator.client, chain, usdt, ngns, restrictedLiquidityWallets=ngns_side["maker"]
    )
    assert [o["rateRay"] for o in book["offers"]] == [ngns_side["rateRay"]]


@pytest.mark.spec(
    "v1/endpoints/get-v1-order-book",
    "v1/endpoints/get-v1-quote",
    "v1/endpoints/must-not-combined",
    "v1/endpoints/steering-parameters",
    "v1/limits/list-limits",
    "v1/errors/400-invalid_request",
)
def test_order_book_and_quote_refuse_bad_parameters(
    integrator: Integrator, chain: VenueChain
) -> None:
    usdc, ngns, wbnb = chain.token("USDC"), chain.token("NGNS"), chain.token("WBNB")
    base = {"chainId": chain.chain_id, "sellToken": usdc.address, "buyToken": ngns.address}
    wallets = [f"0x{i:040x}" for i in range(1, 12)]
    for path, extra in (("/v1/order-book", {}), ("/v1/quote", {"sellAmount": "1000500"})):
        assert_data(integrator.client.get(path, params={**base, **extra}))
        for bad in (
            {"chainId": None},
            {"sellToken": "0x1234"},
            {"buyToken": wbnb.address},  # USDC/WBNB is no corridor
            {"buyToken": usdc.address},
            {"chainId": 424242},
            {"restrictedLiquidityWallets": ",".join(wallets)},  # 11 wallets
            {"preferredLiquidityWallets": wallets[0], "restrictedLiquidityWallets": wallets[1]},
        ):
            query = {k: v for k, v in {**base, **extra, **bad}.items() if v is not None}
            assert_error(integrator.client.get(path, params=query), 400, "invalid_request")
    for bad_quote in ({"sellAmount": "-1"}, {"sellAmount": None}, {"minRate": "1e27"}):
        query = {k: v for k, v in {**base, "sellAmount": "1000500", **bad_quote}.items() if v}
        assert_error(integrator.client.get("/v1/quote", params=query), 400, "invalid_request")
