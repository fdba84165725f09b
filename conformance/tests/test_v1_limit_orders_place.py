"""v1 limit orders placed the way an existing v1 integrator places them (spec 3 "POST
/v1/limit-orders/prepare", "POST /v1/limit-orders", "Limit order record"): a key of its own
partner, a maker wallet funded from a demo wallet that approved the signature-transfer
contract, the prepared typed data signed with eth_signTypedData_v4, the signed order submitted
back, the record read live. Orders are asks the filling operator will not take (it bids below
the mid), on chain 97's BOOK corridor USDC/NGNS unless a test needs other decimals.

Without control the integrator is the given ``key:v1``, makers are funded from the given taker
wallet, and what the spec leaves open (the fee's size, details.reason codes, extra fields, the
meaning of SUPERSEDED, pricing modes other than fastFill) is held to rfqsim's decisions only on
rfqsim; a second partner's view needs control (or is skipped).
"""

from __future__ import annotations

from typing import Any

import pytest
from eth_account.messages import encode_typed_data
from eth_utils.crypto import keccak

from conformance.calls.v1_book import (
    Integrator,
    book_rate,
    create_swap,
    execute_swap,
    fee_of,
    funded_maker,
    funded_taker,
    get_order,
    invalidate_nonce,
    order_book,
    place,
    prepare,
    prepare_body,
    rate,
    sign_typed_data,
    signed_body,
    submit,
    swap_body,
    v1_integrator,
    wait_order,
)
from conformance.calls.v1_calls import bearer
from conformance.calls.v1_target import (
    RECORD_FIELDS,
    Shapes,
    book_chain,  # noqa: F401  (overrides the chain fixture)
    sample_order,
)
from conformance.deployment.funding import fund_wallet
from conformance.deployment.key_source import KeySource
from conformance.deployment.service_clock import Clocked
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import hex_bytes
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error, parse_iso_utc
from contracts.orders import (
    ZERO_ADDRESS,
    RfqOrder,
    decode_order,
    permit_witness_typed_data,
)
from rfqkit.wallets import Wallet

pytestmark = pytest.mark.needs("key:v1")

NGNS_PER_USDC = 1500  # an ask: the operator bids about 1600 NGNS per USDC
ORDER_FIELDS = {
    "chainId",
    "reactor",
    "maker",
    "inputToken",
    "inputAmount",
    "outputToken",
    "outputAmount",
    "nonce",
    "deadline",
}


def _digest(typed: dict[str, Any]) -> bytes:
    signable = encode_typed_data(full_message=typed)
    return keccak(b"\x19" + signable.version + signable.header + signable.body)


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders-prepare",
    "v1/endpoints/post-v1-limit-orders-prepare/body",
    "v1/endpoints/post-v1-limit-orders-prepare/typed-data-signed-eth_signtypeddata_v4",
    "v1/endpoints/post-v1-limit-orders-prepare/proceeds-always-pay-maker",
    "v1/resources/limit-order-prepare-response/typeddata-domain-name-chainid",
    "v1/overview/non-custodial",
    "v1/overview/conventions",
)
def test_prepare_returns_the_permit2_typed_data_over_the_reactor(
    integrator: Integrator, clock: Clocked, chain: VenueChain, target: Target
) -> None:
    shapes = Shapes(target)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    maker = Wallet.create()  # preparing needs no funds: nothing is checked until submit
    deadline = clock.now_ms() // 1000 + 600
    sell, buy = ngns.units(1500), usdc.units(1)
    data = prepare(
        integrator.client,
        prepare_body(chain, maker, ngns, sell, usdc, deadline=deadline, buy_amount=buy),
    )
    shapes.fields(data, {"typedData", "digest", "encodedOrder", "order"})
    typed = data["typedData"]
    domain = typed["domain"]
    shapes.fields(domain, {"name", "chainId", "verifyingContract"})
    assert domain["chainId"] == chain.chain_id
    shapes.address(domain["verifyingContract"], chain.contracts["signature_transfer"])
    assert typed["primaryType"] == "PermitWitnessTransferFrom"
    # The digest is the EIP-712 hash of the typed data, as the maker's wallet computes it.
    assert hex_bytes(data["digest"]) == _digest(typed)
    order = data["order"]
    shapes.fields(order, ORDER_FIELDS)
    assert order["chainId"] == chain.chain_id
    shapes.address(order["maker"], maker.address)
    shapes.address(order["inputToken"], ngns.address)
    shapes.address(order["outputToken"], usdc.address)
    assert (order["inputAmount"], order["outputAmount"]) == (str(sell), str(buy))
    assert order["deadline"] == str(deadline)
    assert order["nonce"].isdigit()
    if not shapes.exact:
        return  # the witness and the encoded order are the venue's contract's (not shown)
    assert domain["name"] == "Permit2"
    assert [f["name"] for f in typed["types"]["PermitWitnessTransferFrom"]] == [
        "permitted",
        "spender",
        "nonce",
        "deadline",
        "witness",
    ]
    assert order["reactor"] == chain.reactor
    # The encoded order is the reactor's RfqOrder: anyone may fill it (taker zero), the
    # proceeds go to the maker, the fee is the corridor's 5 bp of the output, paid on top.
    decoded = decode_order(hex_bytes(data["encodedOrder"]))
    assert decoded == RfqOrder(
        reactor=chain.reactor,
        maker=maker.address,
        taker=ZERO_ADDRESS,
        inputToken=ngns.address,
        inputAmount=sell,
        outputToken=usdc.address,
        outputAmount=buy,
        feeAmount=fee_of(buy),
        nonce=int(order["nonce"]),
        deadline=deadline,
    )
    message = typed["message"]
    assert message["spender"] == chain.reactor
    assert message["permitted"] == {"token": ngns.address, "amount": str(sell)}
    assert message["witness"] == decoded.to_message()
    assert typed == permit_witness_typed_data(
        decoded, chain.chain_id, chain.contracts["signature_transfer"]
    )


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders",
    "v1/endpoints/post-v1-limit-orders/body",
    "v1/endpoints/post-v1-limit-orders/service-recovers-signer-verifies",
    "v1/states/limit-order-status/none-post-v1-limit-orders",
    "v1/states/limit-order-status/submit-response-reports-status",
    "v1/states/limit-order-status/values",
    "v1/endpoints/get-v1-limit-orders-id",
    "v1/resources/limit-order-record/id",
    "v1/resources/limit-order-record/chainid",
    "v1/resources/limit-order-record/selltoken-sellamount-buytoken-buyamount",
    "v1/resources/limit-order-record/rateray",
    "v1/resources/limit-order-record/executionrateray",
    "v1/resources/limit-order-record/nonce",
    "v1/resources/limit-order-record/deadline",
    "v1/resources/limit-order-record/status",
    "v1/resources/limit-order-record/statusverified",
    "v1/resources/limit-order-record/txhash-filledat",
    "v1/resources/limit-order-record/createdat",
    "v1/overview/item-2",
)
@pytest.mark.needs("taker_wallet")
def test_a_signed_order_rests_active_with_exactly_its_terms(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    shapes = Shapes(target)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: sell})
    before = clock.now_ms() / 1000
    placed = place(integrator, clock, chain, maker, ngns, sell, usdc, buy_amount=buy)
    expected_rate = book_rate(sell, 6, buy, 6)
    if shapes.exact:
        assert placed.answer == {
            "id": placed.order_id,
            "rateRay": str(expected_rate),
            "status": "active",
        }
    else:  # the submit response reports the status; its case and shape are not shown
        assert str(placed.answer["status"]).lower() == "active", placed.answer
    record = get_order(integrator.client, placed.order_id)
    shapes.fields(record, RECORD_FIELDS if shapes.exact else RECORD_FIELDS - {"maker"})
    assert record["id"] == placed.order_id
    assert record["chainId"] == chain.chain_id
    if shapes.exact:
        assert record["maker"] == maker.address
    shapes.address(record["sellToken"], ngns.address)
    shapes.address(record["buyToken"], usdc.address)
    assert (record["sellAmount"], record["buyAmount"]) == (str(sell), str(buy))
    assert record["rateRay"] == str(expected_rate) == str(NGNS_PER_USDC * 10**27)
    assert record["executionRateRay"] == str(rate(sell, 6, buy, 6))
    assert record["nonce"] == placed.prepared["order"]["nonce"]
    assert parse_iso_utc(record["deadline"]).timestamp() == int(placed.body["deadline"])
    assert (record["status"], record["statusVerified"]) == ("ACTIVE", True)
    assert (record["txHash"], record["filledAt"]) == (None, None)
    assert before - 1 <= parse_iso_utc(record["createdAt"]).timestamp() <= before + 60


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders/re-submitting-same-signed-order",
    "v1/states/limit-order-status/rules",
    "v1/endpoints/get-v1-limit-orders-id/once-reconciled-txhash-filledat",
)
@pytest.mark.needs("taker_wallet")
def test_resubmitting_the_same_signed_order_returns_the_same_id_even_after_it_filled(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: sell})
    placed = place(integrator, clock, chain, maker, ngns, sell, usdc, buy_amount=buy)
    again = assert_data(submit(integrator.client, placed.body), 201)
    assert again == placed.answer
    offer = order_book(
        integrator.client, chain, usdc, ngns, restrictedLiquidityWallets=maker.address
    )
    cost = int(offer["offers"][0]["sellAmount"])  # output plus the fee (buy + 5 bp on rfqsim)
    # A taker fills it through an instant swap; the same submit then says so.
    taker = funded_taker(chain, source, {usdc: usdc.units(2)})
    swap = create_swap(
        integrator.client,
        swap_body(
            chain,
            usdc,
            ngns,
            cost,
            taker.address,
            restrictedLiquidityWallets=[maker.address],
        ),
    )
    tx_hash = execute_swap(chain, taker, swap)
    record = wait_order(integrator.client, placed.order_id, "FILLED")
    assert str(record["txHash"]).lower() == tx_hash
    parse_iso_utc(record["filledAt"])
    after = assert_data(submit(integrator.client, placed.body), 201)
    if target.is_simulator:
        assert after == {**placed.answer, "status": "filled"}
    else:  # the same id, with the live status
        assert after["id"] == placed.order_id
        assert str(after["status"]).lower() == "filled", after


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders/unfunded-order-including-one",
    "v1/endpoints/post-v1-limit-orders/service-recovers-signer-verifies",
    "v1/errors/400-invalid_request",
    "v1/errors/same-envelope-document-1",
)
@pytest.mark.parametrize("short", ["balance", "allowance"])
@pytest.mark.needs("taker_wallet")
def test_an_unfunded_order_is_refused_with_the_specs_message(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, short: str
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    if short == "balance":
        maker = funded_maker(chain, source, {ngns: sell - 1})
    else:  # funds but no allowance to the signature-transfer contract
        maker = fund_wallet(chain, source, {ngns.address: sell})
    deadline = clock.now_ms() // 1000 + 600
    prepared = prepare(
        integrator.client,
        prepare_body(chain, maker, ngns, sell, usdc, deadline=deadline, buy_amount=buy),
    )
    resp = submit(integrator.client, signed_body(prepared, sign_typed_data(prepared, maker)))
    error = assert_error(resp, 400, "invalid_request")
    assert error["message"] == "Order batch is not funded", error


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders/service-recovers-signer-verifies",
    "v1/errors/400-invalid_request",
    "v1/endpoints/error-codes-by-v1-endpoint/error-codes-each-v1",
    "v1/errors/error-codes-each-v1",
)
@pytest.mark.needs("taker_wallet")
def test_a_wrong_signature_changed_terms_a_spent_nonce_or_another_reactor_are_refused(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    refused = Shapes(target).error
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: sell})
    deadline = clock.now_ms() // 1000 + 600
    prepared = prepare(
        integrator.client,
        prepare_body(chain, maker, ngns, sell, usdc, deadline=deadline, buy_amount=buy),
    )
    good = signed_body(prepared, sign_typed_data(prepared, maker))
    forged = signed_body(prepared, sign_typed_data(prepared, Wallet.create()))
    refused(submit(integrator.client, forged), 400, "invalid_request", "invalid_signature")
    cheaper = {**good, "outputAmount": str(buy - 1)}
    refused(submit(integrator.client, cheaper), 400, "invalid_request", "invalid_signature")
    elsewhere = {**good, "reactor": chain.contracts.get("router", maker.address)}  # not the reactor
    refused(submit(integrator.client, elsewhere), 400, "invalid_request", "wrong_reactor")
    invalidate_nonce(chain, maker, int(prepared["order"]["nonce"]))
    refused(submit(integrator.client, good), 400, "invalid_request", "nonce_used")


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders-prepare/body",
    "v1/limits/list-limits",
    "v1/errors/400-invalid_request",
    "v1/auth/environments",
)
def test_prepare_refuses_bad_input_and_caps_the_deadline(
    integrator: Integrator, clock: Clocked, chain: VenueChain, target: Target
) -> None:
    usdc, ngns, wbnb = chain.token("USDC"), chain.token("NGNS"), chain.token("WBNB")
    maker = Wallet.create()
    now = clock.now_ms() // 1000
    base = prepare_body(chain, maker, ngns, ngns.units(1500), usdc, deadline=now + 600)
    post = integrator.client.post
    # Exactly one of buyAmount or pricing.
    assert_error(post("/v1/limit-orders/prepare", json=base), 400, "invalid_request")
    both = {**base, "buyAmount": "1000000", "pricing": {"mode": "fastFill"}}
    assert_error(post("/v1/limit-orders/prepare", json=both), 400, "invalid_request")
    priced = {**base, "buyAmount": "1000000"}
    bads: list[dict[str, Any]] = [
        {"pricing": {"mode": "fastFill", "marginBps": 1001}, "buyAmount": None},
        {"deadline": now - 1},
        {"buyToken": wbnb.address},  # NGNS/WBNB is no corridor
        {"sellAmount": "0"},
        {"maker": "0x1234"},
    ]
    if target.is_simulator:  # rfqsim's: no other pricing mode; its 5 bp fee's minBuyAmount 2000
        bads += [{"pricing": {"mode": "auction"}, "buyAmount": None}, {"buyAmount": "1999"}]
    for bad in bads:
        body = {k: v for k, v in {**priced, **bad}.items() if v is not None}
        assert_error(post("/v1/limit-orders/prepare", json=body), 400, "invalid_request")
    # About one year at most: a deadline three years out is capped.
    far = prepare(integrator.client, {**priced, "deadline": now + 3 * 365 * 86_400})
    capped = int(far["order"]["deadline"])
    assert now + 360 * 86_400 <= capped <= now + 367 * 86_400, capped
    # A deadline as a decimal string (as the prepare response writes it) is accepted.
    as_string = prepare(integrator.client, {**priced, "deadline": str(now + 600)})
    assert as_string["order"]["deadline"] == str(now + 600)


@pytest.mark.spec("v1/auth/environments", "v1/errors/400-invalid_request")
@pytest.mark.needs("key:live")
def test_prepare_with_a_live_key_on_a_test_chain_is_400(
    target: Target, http: Client, clock: Clocked, chain: VenueChain
) -> None:
    if target.controllable:
        live = v1_integrator(target.sim(), http, "live").client
    else:
        live = http.with_headers(bearer(KeySource(target, "v1").make("live", ["trades:write"])))
    body = sample_order(chain, clock)
    assert_error(live.post("/v1/limit-orders/prepare", json=body), 400, "invalid_request")
