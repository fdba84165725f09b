"""v1 limit orders placed the way an existing v1 integrator places them (spec 3 "POST
/v1/limit-orders/prepare", "POST /v1/limit-orders", "Limit order record"): a key of its own
partner, a maker wallet funded from a demo wallet that approved the signature-transfer
contract, the prepared typed data signed with eth_signTypedData_v4, the signed order submitted
back, the record read live. Orders are asks the filling operator will not take (it bids below
the mid), on chain 97's BOOK corridor USDC/NGNS unless a test needs other decimals.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from eth_account.messages import encode_typed_data
from eth_utils.crypto import keccak

from conformance.chain import Wallet, hex_bytes
from conformance.client import Client
from conformance.funding import fund_wallet
from conformance.response_checks import assert_data, assert_error, parse_iso_utc
from conformance.rfq_calls import service_now_ms
from conformance.sim_control import SimControl
from conformance.v1_book import (
    Integrator,
    book_rate,
    create_swap,
    execute_swap,
    fee_of,
    funded_maker,
    funded_taker,
    get_order,
    invalidate_nonce,
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
from conformance.venue import ChainInfo
from contracts.orders import (
    ZERO_ADDRESS,
    RfqOrder,
    decode_order,
    permit_witness_typed_data,
)

pytestmark = pytest.mark.sim_only  # keys come from /_sim/keys

RECORD_FIELDS = {
    "id",
    "chainId",
    "maker",
    "sellToken",
    "sellAmount",
    "buyToken",
    "buyAmount",
    "rateRay",
    "executionRateRay",
    "nonce",
    "deadline",
    "status",
    "statusVerified",
    "txHash",
    "filledAt",
    "createdAt",
}
NGNS_PER_USDC = 1500  # an ask: the operator bids about 1600 NGNS per USDC


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
    integrator: Integrator, sim: SimControl, chain: ChainInfo, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    maker = Wallet.create()  # preparing needs no funds: nothing is checked until submit
    deadline = service_now_ms(sim) // 1000 + 600
    sell, buy = ngns.units(1500), usdc.units(1)
    data = prepare(
        integrator.client,
        prepare_body(chain, maker, ngns, sell, usdc, deadline=deadline, buy_amount=buy),
    )
    assert set(data) == {"typedData", "digest", "encodedOrder", "order"}, sorted(data)
    typed = data["typedData"]
    assert typed["domain"] == {
        "name": "Permit2",
        "chainId": chain.chain_id,
        "verifyingContract": chain.contracts["signature_transfer"],
    }, typed["domain"]
    assert typed["primaryType"] == "PermitWitnessTransferFrom"
    assert [f["name"] for f in typed["types"]["PermitWitnessTransferFrom"]] == [
        "permitted",
        "spender",
        "nonce",
        "deadline",
        "witness",
    ]
    order = data["order"]
    assert set(order) == {
        "chainId",
        "reactor",
        "maker",
        "inputToken",
        "inputAmount",
        "outputToken",
        "outputAmount",
        "nonce",
        "deadline",
    }, sorted(order)
    assert order["chainId"] == chain.chain_id
    assert order["reactor"] == chain.reactor
    assert order["maker"] == maker.address
    assert (order["inputToken"], order["inputAmount"]) == (ngns.address, str(sell))
    assert (order["outputToken"], order["outputAmount"]) == (usdc.address, str(buy))
    assert order["deadline"] == str(deadline)
    assert order["nonce"].isdigit()
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
    # The digest is the EIP-712 hash of the typed data, as the maker's wallet computes it.
    assert hex_bytes(data["digest"]) == _digest(typed)
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
def test_a_signed_order_rests_active_with_exactly_its_terms(
    integrator: Integrator, sim: SimControl, chain: ChainInfo, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: sell})
    before = service_now_ms(sim) / 1000
    placed = place(integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=buy)
    expected_rate = book_rate(sell, 6, buy, 6)
    assert placed.answer == {
        "id": placed.order_id,
        "rateRay": str(expected_rate),
        "status": "active",
    }
    record = get_order(integrator.client, placed.order_id)
    assert set(record) == RECORD_FIELDS, sorted(set(record) ^ RECORD_FIELDS)
    assert record["id"] == placed.order_id
    assert record["chainId"] == chain.chain_id
    assert record["maker"] == maker.address
    assert (record["sellToken"], record["sellAmount"]) == (ngns.address, str(sell))
    assert (record["buyToken"], record["buyAmount"]) == (usdc.address, str(buy))
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
def test_resubmitting_the_same_signed_order_returns_the_same_id_even_after_it_filled(
    integrator: Integrator, sim: SimControl, chain: ChainInfo, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: sell})
    placed = place(integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=buy)
    again = assert_data(submit(integrator.client, placed.body), 201)
    assert again == placed.answer
    # A taker fills it through an instant swap; the same submit then says so.
    taker = funded_taker(chain, source, {usdc: usdc.units(2)})
    swap = create_swap(
        integrator.client,
        swap_body(
            chain,
            usdc,
            ngns,
            buy + fee_of(buy),
            taker.address,
            restrictedLiquidityWallets=[maker.address],
        ),
    )
    tx_hash = execute_swap(chain, taker, swap)
    record = wait_order(integrator.client, placed.order_id, "FILLED")
    assert str(record["txHash"]).lower() == tx_hash
    parse_iso_utc(record["filledAt"])
    after = assert_data(submit(integrator.client, placed.body), 201)
    assert after == {**placed.answer, "status": "filled"}


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders/unfunded-order-including-one",
    "v1/endpoints/post-v1-limit-orders/service-recovers-signer-verifies",
    "v1/errors/400-invalid_request",
    "v1/errors/same-envelope-document-1",
)
@pytest.mark.parametrize("short", ["balance", "allowance"])
def test_an_unfunded_order_is_refused_with_the_specs_message(
    integrator: Integrator, sim: SimControl, chain: ChainInfo, source: Wallet, short: str
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    if short == "balance":
        maker = funded_maker(chain, source, {ngns: sell - 1})
    else:  # funds but no allowance to the signature-transfer contract
        maker = fund_wallet(chain, source, {ngns.address: sell})
    deadline = service_now_ms(sim) // 1000 + 600
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
def test_a_wrong_signature_changed_terms_a_spent_nonce_or_another_reactor_are_refused(
    integrator: Integrator, sim: SimControl, chain: ChainInfo, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(NGNS_PER_USDC), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: sell})
    deadline = service_now_ms(sim) // 1000 + 600
    prepared = prepare(
        integrator.client,
        prepare_body(chain, maker, ngns, sell, usdc, deadline=deadline, buy_amount=buy),
    )
    good = signed_body(prepared, sign_typed_data(prepared, maker))
    forged = signed_body(prepared, sign_typed_data(prepared, Wallet.create()))
    assert_error(submit(integrator.client, forged), 400, "invalid_request", "invalid_signature")
    cheaper = {**good, "outputAmount": str(buy - 1)}
    assert_error(submit(integrator.client, cheaper), 400, "invalid_request", "invalid_signature")
    elsewhere = {**good, "reactor": chain.router}
    assert_error(submit(integrator.client, elsewhere), 400, "invalid_request", "wrong_reactor")
    invalidate_nonce(chain, maker, int(prepared["order"]["nonce"]))
    assert_error(submit(integrator.client, good), 400, "invalid_request", "nonce_used")


@pytest.mark.spec(
    "v1/endpoints/post-v1-limit-orders-prepare/body",
    "v1/limits/list-limits",
    "v1/errors/400-invalid_request",
    "v1/auth/environments",
)
def test_prepare_refuses_bad_input_and_caps_the_deadline(
    integrator: Integrator, sim: SimControl, http: Client, chain: ChainInfo
) -> None:
    usdc, ngns, wbnb = chain.token("USDC"), chain.token("NGNS"), chain.token("WBNB")
    maker = Wallet.create()
    now = service_now_ms(sim) // 1000
    base = prepare_body(chain, maker, ngns, ngns.units(1500), usdc, deadline=now + 600)
    post = integrator.client.post
    # Exactly one of buyAmount or pricing.
    assert_error(post("/v1/limit-orders/prepare", json=base), 400, "invalid_request")
    both = {**base, "buyAmount": "1000000", "pricing": {"mode": "fastFill"}}
    assert_error(post("/v1/limit-orders/prepare", json=both), 400, "invalid_request")
    priced = {**base, "buyAmount": "1000000"}
    for bad in (
        {"pricing": {"mode": "fastFill", "marginBps": 1001}, "buyAmount": None},
        {"pricing": {"mode": "auction"}, "buyAmount": None},
        {"deadline": now - 1},
        {"buyAmount": "1999"},  # below minBuyAmount: the fee would round to nothing
        {"buyToken": wbnb.address},  # NGNS/WBNB is no corridor
        {"sellAmount": "0"},
        {"maker": "0x1234"},
    ):
        body = {k: v for k, v in {**priced, **bad}.items() if v is not None}
        assert_error(post("/v1/limit-orders/prepare", json=body), 400, "invalid_request")
    # A live key on a test chain.
    live = v1_integrator(sim, http, "live")
    resp = live.client.post("/v1/limit-orders/prepare", json=priced)
    assert_error(resp, 400, "invalid_request")
    # About one year at most: a deadline three years out is capped.
    far = prepare(integrator.client, {**priced, "deadline": now + 3 * 365 * 86_400})
    capped = int(far["order"]["deadline"])
    assert now + 360 * 86_400 <= capped <= now + 367 * 86_400, capped
    # A deadline as a decimal string (as the prepare response writes it) is accepted.
    as_string = prepare(integrator.client, {**priced, "deadline": str(now + 600)})
    assert as_string["order"]["deadline"] == str(now + 600)


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-id/only-orders-submitted-through",
    "v1/endpoints/get-v1-limit-orders",
    "v1/errors/404-not_found",
    "v1/limits/list-limits",
)
def test_records_are_partner_scoped_and_listed_newest_first(
    integrator: Integrator, sim: SimControl, http: Client, chain: ChainInfo, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(NGNS_PER_USDC)
    maker = funded_maker(chain, source, {ngns: 3 * sell})
    ids = [
        place(integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1)).order_id
        for _ in range(3)
    ]
    stranger = v1_integrator(sim, http)
    assert_error(stranger.client.get(f"/v1/limit-orders/{ids[0]}"), 404, "not_found")
    assert_error(
        integrator.client.get("/v1/limit-orders/lo_000000000000000000000000"), 404, "not_found"
    )
    query = {"chainId": chain.chain_id, "wallet": maker.address}
    listed = assert_data(integrator.client.get("/v1/limit-orders", params=query))
    assert [o["id"] for o in listed] == ids[::-1], "the wallet's orders, newest first"
    assert all(o["status"] == "ACTIVE" and o["statusVerified"] for o in listed), listed
    assert set(listed[0]) == RECORD_FIELDS
    two = assert_data(integrator.client.get("/v1/limit-orders", params={**query, "limit": 2}))
    assert [o["id"] for o in two] == ids[:0:-1]
    assert assert_data(stranger.client.get("/v1/limit-orders", params=query)) == []
    for limit in (0, 201, "x"):
        resp = integrator.client.get("/v1/limit-orders", params={**query, "limit": limit})
        assert_error(resp, 400, "invalid_request")
    resp = integrator.client.get("/v1/limit-orders", params={"chainId": chain.chain_id})
    assert_error(resp, 400, "invalid_request")  # wallet is required


@pytest.mark.spec(
    "v1/resources/limit-order-record/the-meaning-of-superseded",
    "v1/states/limit-order-status/transitions-superseded-not-shown",
    "v1/states/limit-order-status/values",
)
def test_a_newer_order_on_the_same_nonce_supersedes_the_active_one(
    integrator: Integrator, sim: SimControl, chain: ChainInfo, source: Wallet
) -> None:
    """Decision (docs/decisions.md "v1 book"): only one of two orders signed on one Permit2
    nonce can ever settle, so the newer one replaces the older, which reads SUPERSEDED."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(NGNS_PER_USDC)
    maker = funded_maker(chain, source, {ngns: sell})
    older = place(integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1))
    # The maker re-signs different terms on the same nonce (a wallet can do this itself).
    first = decode_order(hex_bytes(older.prepared["encodedOrder"]))
    newer_order = dataclasses.replace(
        first, outputAmount=usdc.units(2), feeAmount=fee_of(usdc.units(2))
    )
    typed = permit_witness_typed_data(
        newer_order, chain.chain_id, chain.contracts["signature_transfer"]
    )
    body = {
        **older.body,
        "outputAmount": str(usdc.units(2)),
        "signature": sign_typed_data({"typedData": typed}, maker),
    }
    newer = assert_data(submit(integrator.client, body), 201)
    assert newer["status"] == "active"
    assert newer["id"] != older.order_id
    assert get_order(integrator.client, older.order_id)["status"] == "SUPERSEDED"
    assert get_order(integrator.client, newer["id"])["status"] == "ACTIVE"
