"""v1 limit order records (spec 3 "GET /v1/limit-orders", "Limit order record"): a wallet's
orders listed newest first, another partner's view and SUPERSEDED, with orders placed as an
existing v1 integrator places them (test_v1_limit_orders_place.py): asks the filling operator
will not take, on chain 97's BOOK corridor USDC/NGNS, makers funded from a demo wallet.

Without control the integrator is the given ``key:v1`` and makers are funded from the given
taker wallet; a second partner is made only through /_sim/keys, and SUPERSEDED's meaning is
rfqsim's decision (B9), held to rfqsim only.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from conformance.calls.v1_book import (
    Integrator,
    fee_of,
    funded_maker,
    get_order,
    place,
    sign_typed_data,
    submit,
    v1_integrator,
    with_idempotency_key,
)
from conformance.calls.v1_target import (
    RECORD_FIELDS,
    Shapes,
    book_chain,  # noqa: F401  (overrides the chain fixture)
)
from conformance.checks.stable_reads import KINDS, REPLAY, a_second_later, assert_stable, row_of
from conformance.deployment.service_clock import Clocked
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import hex_bytes
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error
from contracts.orders import (
    decode_order,
    permit_witness_typed_data,
)
from rfqkit.wallets import Wallet

pytestmark = pytest.mark.needs("key:v1")

NGNS_PER_USDC = 1500  # an ask: the operator bids about 1600 NGNS per USDC


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-id/only-orders-submitted-through",
    "v1/endpoints/get-v1-limit-orders",
    "v1/errors/404-not_found",
    "v1/limits/list-limits",
    "v1/endpoints/every-post-creates-may",
    *KINDS["limit_order"].rules,
)
@pytest.mark.needs("taker_wallet")
def test_records_are_listed_by_wallet_newest_first(
    integrator: Integrator,
    clock: Clocked,
    http: Client,
    chain: VenueChain,
    source: Wallet,
    target: Target,
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(NGNS_PER_USDC)
    maker = funded_maker(chain, source, {ngns: 3 * sell})
    keyed, one = with_idempotency_key(integrator.client), usdc.units(1)
    placed = [  # the newest submitted with an Idempotency-Key
        place(integrator, clock, chain, maker, ngns, sell, usdc, buy_amount=one, submit_with=by)
        for by in (None, None, keyed)
    ]
    ids = [order.order_id for order in placed]
    assert_error(
        integrator.client.get("/v1/limit-orders/lo_000000000000000000000000"), 404, "not_found"
    )
    query = {"chainId": chain.chain_id, "wallet": maker.address}
    listed = assert_data(integrator.client.get("/v1/limit-orders", params=query))
    assert [o["id"] for o in listed] == ids[::-1], "the wallet's orders, newest first"
    assert all(o["status"] == "ACTIVE" and o["statusVerified"] for o in listed), listed
    Shapes(target).fields(
        listed[0], RECORD_FIELDS if target.is_simulator else RECORD_FIELDS - {"maker"}
    )
    two = assert_data(integrator.client.get("/v1/limit-orders", params={**query, "limit": 2}))
    assert [o["id"] for o in two] == ids[:0:-1]
    # A row of the list is the record read again, and so is the record a second later; the
    # create replayed under its Idempotency-Key is the first answer.
    records = {row["id"]: get_order(integrator.client, row["id"]) for row in listed}
    read_at = time.monotonic()
    for row in listed:
        assert_stable("limit_order", row["id"], row, records[row["id"]], what=row_of())
    replay = assert_data(submit(keyed, placed[2].body), 201)
    assert_stable("limit_order", ids[2], placed[2].answer, replay, what=REPLAY)
    later = a_second_later(read_at)
    for order_id, record in records.items():
        again = get_order(integrator.client, order_id)
        assert_stable("limit_order", order_id, record, again, what=later)
    for limit in (0, 201, "x"):
        resp = integrator.client.get("/v1/limit-orders", params={**query, "limit": limit})
        assert_error(resp, 400, "invalid_request")
    resp = integrator.client.get("/v1/limit-orders", params={"chainId": chain.chain_id})
    assert_error(resp, 400, "invalid_request")  # wallet is required


@pytest.mark.spec("v1/endpoints/get-v1-limit-orders", *KINDS["limit_order"].rules)
@pytest.mark.needs("taker_wallet")
def test_a_wallets_newer_order_heads_its_list_and_each_row_is_its_record(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, one = ngns.units(NGNS_PER_USDC), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: 2 * sell})
    query = {"chainId": chain.chain_id, "wallet": maker.address}

    def listed() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = assert_data(
            integrator.client.get("/v1/limit-orders", params=query)
        )
        for row in rows:  # each row is its record, read on its own
            record = get_order(integrator.client, row["id"])
            assert_stable("limit_order", row["id"], row, record, what=row_of())
        return rows

    older = place(integrator, clock, chain, maker, ngns, sell, usdc, buy_amount=one)
    record = get_order(integrator.client, older.order_id)
    read_at = time.monotonic()
    assert [o["id"] for o in listed()] == [older.order_id]
    # The newer order is placed a second after the older was read back: newer by any clock's
    # grain, so its place at the head of the list shows whatever the service's timestamps.
    later = a_second_later(read_at)
    again = get_order(integrator.client, older.order_id)
    assert_stable("limit_order", older.order_id, record, again, what=later)
    newer = place(integrator, clock, chain, maker, ngns, sell, usdc, buy_amount=one)
    assert [o["id"] for o in listed()] == [newer.order_id, older.order_id], "newest first"


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-id/only-orders-submitted-through",
    "v1/endpoints/get-v1-limit-orders",
    "v1/errors/404-not_found",
)
@pytest.mark.needs("sim_control", "taker_wallet")
def test_another_partner_neither_reads_nor_lists_the_orders(
    integrator: Integrator, clock: Clocked, http: Client, chain: VenueChain, source: Wallet
) -> None:
    """A second partner of its own is made through /_sim/keys."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    maker = funded_maker(chain, source, {ngns: ngns.units(NGNS_PER_USDC)})
    placed = place(
        integrator,
        clock,
        chain,
        maker,
        ngns,
        ngns.units(NGNS_PER_USDC),
        usdc,
        buy_amount=usdc.units(1),
    )
    stranger = v1_integrator(SimControl(http), http)
    assert_error(stranger.client.get(f"/v1/limit-orders/{placed.order_id}"), 404, "not_found")
    query = {"chainId": chain.chain_id, "wallet": maker.address}
    assert assert_data(stranger.client.get("/v1/limit-orders", params=query)) == []


@pytest.mark.sim_only(because="decision")
@pytest.mark.spec(
    "v1/resources/limit-order-record/the-meaning-of-superseded",
    "v1/states/limit-order-status/transitions-superseded-not-shown",
    "v1/states/limit-order-status/values",
)
def test_a_newer_order_on_the_same_nonce_supersedes_the_active_one(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    """Decision (docs/decisions.md "v1 book" B9): only one of two orders signed on one Permit2
    nonce can ever settle, so the newer one replaces the older, which reads SUPERSEDED. The
    spec does not show SUPERSEDED's meaning: only rfqsim is held to it."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(NGNS_PER_USDC)
    maker = funded_maker(chain, source, {ngns: sell})
    older = place(integrator, clock, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1))
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
