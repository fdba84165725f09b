"""POST /v1/swaps and the swap endpoints as a v1 integrator calls them (spec 3 "Create-swap
request", the swap rows of the endpoint table): the 201 swap with its unsigned transactions,
the 200 answers with nothing to build (no liquidity, partial_fill under requireFullFill),
minRate and steering, submit's idempotency and conflicts, and the pages of GET /v1/swaps.
Liquidity is the test's own makers' asks on chain 97's BOOK corridor, steered to them.

Without control the integrator is the given ``key:v1`` (its swaps are shared with the other
tests) and makers are funded from the given taker wallet; what the spec does not show (the 201
body, the 200 body's other fields, details.reason codes, the page shape of GET /v1/swaps, the
fee's size) is held to rfqsim's decisions only on rfqsim, and a swap's expiry (the clock moved)
and a second partner need control.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from eth_abi.abi import decode as abi_decode

from conformance.calls.v1_book import (
    Integrator,
    create_swap,
    funded_maker,
    get_swap,
    order_book,
    place,
    rate,
    swap_body,
    v1_integrator,
    with_idempotency_key,
)
from conformance.calls.v1_target import (
    Shapes,
    book_chain,  # noqa: F401  (overrides the chain fixture)
)
from conformance.checks.stable_reads import KINDS, REPLAY, a_second_later, assert_stable, row_of
from conformance.deployment.service_clock import Clocked
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import hex_bytes, selector
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error, parse_iso_utc
from contracts.orders import decode_order
from rfqkit.wallets import Wallet

pytestmark = pytest.mark.needs("key:v1", "taker_wallet")

SWAP_FIELDS = {
    "id",
    "status",
    "chainId",
    "sellToken",
    "buyToken",
    "taker",
    "sellAmount",
    "soldAmount",
    "buyAmount",
    "feeAmount",
    "rateRay",
    "minRate",
    "requireFullFill",
    "partialFill",
    "orders",
    "allowanceTarget",
    "transactions",
    "expiresAt",
    "cancelReason",
    "txHash",
    "submittedAt",
    "filledAt",
    "proceeds",
    "effectiveRateRay",
    "createdAt",
}
COST = 1_000_500  # rfqsim: 1 USDC of output plus the 5 bp fee
ZERO_HASH = "0x" + "00" * 32


def cost_of(integrator: Integrator, chain: VenueChain, maker: Wallet, target: Target) -> int:
    """What a taker pays for one of :func:`makers_at`'s orders (1 USDC of output plus the fee),
    as the order book offers it: COST on rfqsim."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    book = order_book(
        integrator.client, chain, usdc, ngns, restrictedLiquidityWallets=maker.address
    )
    cost = int(book["offers"][0]["sellAmount"])
    assert cost == COST or not target.is_simulator, cost
    return cost


def makers_at(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, rates: list[int]
) -> list[Wallet]:
    """One maker per rate, each selling `rate` NGNS for 1 USDC."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    out = []
    for ngns_per_usdc in rates:
        maker = funded_maker(chain, source, {ngns: ngns.units(ngns_per_usdc)})
        place(
            integrator,
            clock,
            chain,
            maker,
            ngns,
            ngns.units(ngns_per_usdc),
            usdc,
            buy_amount=usdc.units(1),
        )
        out.append(maker)
    return out


def body_for(
    chain: VenueChain, makers: list[Wallet], sell_amount: int, **extra: Any
) -> dict[str, Any]:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    extra.setdefault("restrictedLiquidityWallets", [m.address for m in makers])
    return swap_body(chain, usdc, ngns, sell_amount, Wallet.create().address, **extra)


@pytest.mark.spec(
    "v1/endpoints/post-v1-swaps",
    "v1/endpoints/201-response-body-post",
    "v1/resources/unsigned-transaction/address-data-hex-value",
    "v1/resources/create-swap-request/chainid",
    "v1/resources/create-swap-request/selltoken",
    "v1/resources/create-swap-request/buytoken",
    "v1/resources/create-swap-request/sellamount",
    "v1/resources/create-swap-request/taker",
    "v1/resources/create-swap-request/fields-create-swap-request-after",
    "v1/states/swap-status/values",
    "v1/overview/non-custodial",
    "v1/endpoints/every-post-creates-may",
    "v1/endpoints/get-v1-swaps",
    *KINDS["swap"].rules,
)
def test_a_swap_is_built_from_whole_orders_with_an_approval_and_one_batch(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    makers = makers_at(integrator, clock, chain, source, [1500, 1480, 1450])
    cost = cost_of(integrator, chain, makers[0], target)
    body = body_for(chain, makers, 2 * cost + 7)  # room for two whole orders, 7 units over
    keyed = with_idempotency_key(integrator.client)
    swap = create_swap(keyed, body)
    created_at = time.monotonic()
    assert swap["status"] == "QUOTED"
    # Read more than once it is the swap created: replayed under its Idempotency-Key, read a
    # second later, and a row of the list where the page (its shape is not shown) shows it.
    assert_stable("swap", swap["id"], swap, create_swap(keyed, body), what=REPLAY)
    later = a_second_later(created_at)
    record = get_swap(integrator.client, swap["id"])
    assert_stable("swap", swap["id"], swap, record, what=later)
    row = listed_swap(integrator.client, swap["id"])
    assert row is not None or not target.is_simulator, f"{swap['id']} is not on the first page"
    if row is not None:
        assert_stable("swap", swap["id"], row, record, what=row_of())
    # The unsigned transactions: an approval to the allowance target, then the swap.
    approval, batch = swap["transactions"]["approval"], swap["transactions"]["swap"]
    for tx in (approval, batch):
        assert {"to", "data", "value"} <= set(tx), tx
        assert hex_bytes(tx["data"]), tx
    assert batch["value"] == "0", batch  # spec 3 "Unsigned transaction": always 0 for swaps
    Shapes(target).address(approval["to"], usdc.address)
    if not target.is_simulator:
        return  # the rest of the 201 body is not shown (rfqsim's: B15)
    assert set(swap) == SWAP_FIELDS, sorted(set(swap) ^ SWAP_FIELDS)
    assert (swap["chainId"], swap["sellToken"], swap["buyToken"]) == (
        chain.chain_id,
        usdc.address,
        ngns.address,
    )
    assert swap["taker"] == body["taker"]
    assert (swap["sellAmount"], swap["soldAmount"]) == (str(2 * COST + 7), str(2 * COST))
    assert swap["partialFill"] is True
    assert swap["buyAmount"] == str(ngns.units(1500 + 1480))
    assert swap["feeAmount"] == str(2 * (COST - usdc.units(1)))
    assert swap["rateRay"] == str(rate(2 * COST, 6, ngns.units(2980), 6))
    assert [o["maker"] for o in swap["orders"]] == [makers[0].address, makers[1].address]
    assert swap["allowanceTarget"] == chain.reactor
    for name in ("txHash", "submittedAt", "filledAt", "proceeds", "effectiveRateRay"):
        assert swap[name] is None, name
    created = parse_iso_utc(swap["createdAt"]).timestamp()
    assert created < parse_iso_utc(swap["expiresAt"]).timestamp() <= created + 60 + 1
    # Approve soldAmount to the reactor, then one executeBatch.
    for tx in (approval, batch):
        assert set(tx) == {"to", "data", "value", "chainId"}
        assert (tx["value"], tx["chainId"]) == ("0", chain.chain_id)
    assert approval["to"] == usdc.address
    data = hex_bytes(approval["data"])
    assert data[:4] == selector("approve(address,uint256)")
    assert abi_decode(["address", "uint256"], data[4:]) == (chain.reactor.lower(), 2 * COST)
    assert batch["to"] == chain.reactor
    data = hex_bytes(batch["data"])
    assert data[:4] == selector("executeBatch((bytes,bytes)[])")
    (signed,) = abi_decode(["(bytes,bytes)[]"], data[4:])
    orders = [decode_order(encoded) for encoded, _ in signed]
    assert [o.maker for o in orders] == [makers[0].address, makers[1].address]
    assert all(o.taker == "0x0000000000000000000000000000000000000000" for o in orders)
    assert record == swap


def listed_swap(client: Client, swap_id: str) -> dict[str, Any] | None:
    """The row naming ``swap_id`` on the first page of GET /v1/swaps (limit 200), looked for
    wherever the page holds a list (its shape is not shown; rfqsim's is B15, newest first)."""
    page = assert_data(client.get("/v1/swaps", params={"limit": 200}))
    held = page.values() if isinstance(page, dict) else [page]
    rows = [row for part in held if isinstance(part, list) for row in part]
    return next((r for r in rows if isinstance(r, dict) and r.get("id") == swap_id), None)


@pytest.mark.spec(
    "v1/endpoints/post-v1-swaps",
    "v1/resources/create-swap-request/requirefullfill",
)
def test_nothing_to_build_is_200_with_fillable_false(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    makers = makers_at(integrator, clock, chain, source, [1500, 1480])
    cost = cost_of(integrator, chain, makers[0], target)
    empty = body_for(chain, makers, cost, restrictedLiquidityWallets=[Wallet.create().address])
    answer = assert_data(integrator.client.post("/v1/swaps", json=empty), 200)
    assert answer["fillable"] is False, answer
    assert not target.is_simulator or answer == {
        "fillable": False,
        "reason": "no_liquidity",
        "sellAmount": str(COST),
        "availableSellAmount": "0",
        "availableBuyAmount": "0",
    }
    partial = body_for(chain, makers, 2 * cost + 7, requireFullFill=True)
    answer = assert_data(integrator.client.post("/v1/swaps", json=partial), 200)
    assert (answer["fillable"], answer["reason"]) == (False, "partial_fill")
    if target.is_simulator:
        assert answer["availableSellAmount"] == str(2 * COST)
    exact = create_swap(integrator.client, body_for(chain, makers, 2 * cost, requireFullFill=True))
    if target.is_simulator:  # the 201 body is rfqsim's (B15)
        assert (exact["soldAmount"], exact["partialFill"]) == (str(2 * COST), False)


@pytest.mark.spec(
    "v1/resources/create-swap-request/minrate",
    "v1/resources/create-swap-request/preferredliquiditywallets",
    "v1/endpoints/steering-parameters",
    "v1/endpoints/must-not-combined",
    "v1/limits/list-limits",
)
def test_min_rate_and_steering(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    makers = makers_at(integrator, clock, chain, source, [1500, 1480, 1450])
    wallets = [Wallet.create().address for _ in range(11)]
    for bad in (
        {"preferredLiquidityWallets": wallets},
        {"restrictedLiquidityWallets": wallets},
        {"preferredLiquidityWallets": wallets[:1], "restrictedLiquidityWallets": wallets[1:2]},
        {"minRate": 5},
        {"requireFullFill": "yes"},
    ):
        body = body_for(chain, makers, COST, **bad)
        if "preferredLiquidityWallets" in bad and "restrictedLiquidityWallets" not in bad:
            del body["restrictedLiquidityWallets"]
        assert_error(integrator.client.post("/v1/swaps", json=body), 400, "invalid_request")
    if not target.is_simulator:
        return  # which orders a swap took shows only in its 201 body (not shown; B15)
    ray = 10**27
    above = create_swap(
        integrator.client, body_for(chain, makers, 3 * COST, minRate=str(1470 * ray))
    )
    assert [o["maker"] for o in above["orders"]] == [m.address for m in makers[:2]]
    assert above["minRate"] == str(1470 * ray)
    # Preferred first (the worst rate here), then the rest in matching order.
    preferred = create_swap(
        integrator.client,
        body_for(
            chain,
            [],
            COST + 1,
            restrictedLiquidityWallets=None,
            preferredLiquidityWallets=f"{makers[2].address}",
        ),
    )
    assert [o["maker"] for o in preferred["orders"]] == [makers[2].address]


@pytest.mark.spec(
    "v1/endpoints/post-v1-swaps",
    "v1/resources/create-swap-request/chainid",
    "v1/resources/create-swap-request/sellamount",
    "v1/resources/create-swap-request/taker",
    "v1/errors/400-invalid_request",
)
def test_a_bad_create_swap_request_is_400(
    integrator: Integrator, chain: VenueChain, target: Target
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    good = swap_body(chain, usdc, ngns, COST, Wallet.create().address)
    bads: list[dict[str, Any]] = [
        {"chainId": "97"},
        {"chainId": 424242},
        {"sellAmount": 1000500},
        {"sellAmount": "0"},
        {"taker": None},
        {"sellToken": None},
        {"buyToken": usdc.address},
    ]
    if target.is_simulator:  # rfqsim refuses fields the spec does not name
        bads.append({"surprise": 1})
    for bad in bads:
        body = {k: v for k, v in {**good, **bad}.items() if v is not None}
        assert_error(integrator.client.post("/v1/swaps", json=body), 400, "invalid_request")


@pytest.mark.spec(
    "v1/endpoints/post-v1-swaps-id-submit",
    "v1/endpoints/error-codes-by-v1-endpoint/error-codes-each-v1",
    "v1/errors/error-codes-each-v1",
    "v1/errors/409-conflict",
    "v1/errors/404-not_found",
    "v1/endpoints/get-v1-swaps-id",
)
def test_submit_is_idempotent_on_the_same_hash_and_conflicts_otherwise(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    makers = makers_at(integrator, clock, chain, source, [1500, 1480])
    cost = cost_of(integrator, chain, makers[0], target)
    swap = create_swap(integrator.client, body_for(chain, makers, cost))
    path = f"/v1/swaps/{swap['id']}/submit"
    tx_hash = "0x" + "ab" * 32
    assert_error(
        integrator.client.post(
            "/v1/swaps/sw_000000000000000000000000/submit", json={"txHash": tx_hash}
        ),
        404,
        "not_found",
    )
    assert_error(integrator.client.post(path, json={"txHash": "0x1234"}), 400, "invalid_request")
    submitted = assert_data(integrator.client.post(path, json={"txHash": tx_hash}))
    assert (submitted["status"], submitted["txHash"]) == ("SUBMITTED", tx_hash)
    parse_iso_utc(submitted["submittedAt"])
    again = assert_data(
        integrator.client.post(path, json={"txHash": tx_hash.upper().replace("0X", "0x")})
    )
    assert again["status"] == "SUBMITTED"
    resp = integrator.client.post(path, json={"txHash": "0x" + "cd" * 32})
    Shapes(target).error(resp, 409, "conflict", "tx_hash_mismatch")


@pytest.mark.spec(
    "v1/endpoints/post-v1-swaps-id-submit",
    "v1/errors/409-conflict",
    "v1/errors/404-not_found",
    "v1/endpoints/get-v1-swaps-id",
)
@pytest.mark.needs("sim_control")
def test_another_partner_gets_404_and_an_expired_swap_takes_no_submit(
    integrator: Integrator, sim: SimControl, http: Client, chain: VenueChain, source: Wallet
) -> None:
    """A second partner is made through /_sim/keys; the swap expires as the clock moves."""
    makers = makers_at(integrator, sim, chain, source, [1500, 1480])
    swap = create_swap(integrator.client, body_for(chain, makers, COST))
    path = f"/v1/swaps/{swap['id']}/submit"
    tx_hash = "0x" + "ab" * 32
    stranger = v1_integrator(sim, http)
    assert_error(stranger.client.post(path, json={"txHash": tx_hash}), 404, "not_found")
    assert_error(stranger.client.get(f"/v1/swaps/{swap['id']}"), 404, "not_found")
    # A swap past its expiresAt does not take a submit.
    late = create_swap(integrator.client, body_for(chain, makers, COST))
    sim.advance(61)
    assert get_swap(integrator.client, late["id"])["status"] == "EXPIRED"
    resp = integrator.client.post(f"/v1/swaps/{late['id']}/submit", json={"txHash": tx_hash})
    assert_error(resp, 409, "conflict", "not_submittable")


@pytest.mark.spec("v1/endpoints/get-v1-swaps", "v1/limits/list-limits")
def test_the_swap_list_answers_a_page_within_the_limit_bounds(integrator: Integrator) -> None:
    # The page's shape is not shown (spec 3); its bounds are: limit 1 to 200.
    for limit in (1, 200):
        resp = integrator.client.get("/v1/swaps", params={"limit": limit})
        assert assert_data(resp) is not None, resp.describe()
    for bad in (0, 201, "x"):
        assert_error(
            integrator.client.get("/v1/swaps", params={"limit": bad}), 400, "invalid_request"
        )


@pytest.mark.sim_only(because="decision")
@pytest.mark.spec(
    "v1/endpoints/get-v1-swaps",
    "v1/endpoints/201-response-body-post",
    "v1/states/swap-status/values",
    "v1/limits/list-limits",
)
def test_swaps_are_paged_newest_first_with_an_opaque_cursor(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    makers = makers_at(integrator, clock, chain, source, [1500, 1490, 1480, 1470, 1460])
    ids = [create_swap(integrator.client, body_for(chain, makers, COST))["id"] for _ in range(5)]
    resp = integrator.client.get("/v1/swaps", params={"limit": 2})
    assert resp.status == 200, resp
    page = resp.json()
    assert set(page) == {"data", "nextCursor"}, "a page is {data, nextCursor}"
    seen = [s["id"] for s in page["data"]]
    while page["nextCursor"] is not None:
        page = assert_page(integrator.client, {"limit": 2, "cursor": page["nextCursor"]})
        seen += [s["id"] for s in page["data"]]
    assert seen == ids[::-1]
    assert_data(
        integrator.client.post(f"/v1/swaps/{ids[1]}/submit", json={"txHash": "0x" + "12" * 32})
    )
    submitted = assert_page(integrator.client, {"status": "SUBMITTED"})
    assert [s["id"] for s in submitted["data"]] == [ids[1]]
    assert submitted["nextCursor"] is None
    quoted = assert_page(integrator.client, {"status": "QUOTED", "limit": 200})
    assert [s["id"] for s in quoted["data"]] == [i for i in ids[::-1] if i != ids[1]]
    for bad in ({"limit": 0}, {"limit": 201}, {"status": "PENDING"}, {"cursor": "not-a-cursor"}):
        assert_error(integrator.client.get("/v1/swaps", params=bad), 400, "invalid_request")


def assert_page(client: Client, params: dict[str, Any]) -> dict[str, Any]:
    resp = client.get("/v1/swaps", params=params)
    assert resp.status == 200, resp
    page: dict[str, Any] = resp.json()
    assert set(page) == {"data", "nextCursor"}
    return page
