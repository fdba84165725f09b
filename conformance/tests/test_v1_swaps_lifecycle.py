"""An instant swap's life (spec 3 "Swap status", "Events"; transitions: docs/decisions.md "v1
book"), end to end with real transactions: a swap composed of several whole resting orders of
several makers settles with exact balances for the taker, every maker and the fee recipient,
reads FILLED whether or not /submit was called, and swap.filled reaches a real https receiver,
signed; a swap whose order becomes unfillable before anything was submitted reads CANCELLED.

Without control the integrator is the given ``key:v1`` and wallets are funded from the given
taker wallet; the swap record's fields and its CANCELLED transition are rfqsim's decisions (B15,
B16), held to rfqsim only, and events need a receiver the service reaches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from conformance.calls.v1_book import (
    Integrator,
    create_swap,
    execute_swap,
    fee_of,
    funded_maker,
    funded_taker,
    get_order,
    invalidate_nonce,
    order_book,
    place,
    rate,
    register_endpoint,
    swap_body,
    verified_event,
    wait_order,
    wait_swap,
)
from conformance.calls.v1_target import book_chain  # noqa: F401  (overrides the chain fixture)
from conformance.deployment.funding import Balances
from conformance.deployment.service_clock import Clocked
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import token_delta
from conformance.wire.response_checks import assert_data, assert_error, parse_iso_utc
from rfqkit.wallets import Wallet
from rfqkit.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.needs("key:v1")

WAIT_S = 15.0
SWAP_EVENT_FIELDS = {
    "id",
    "chainId",
    "txHash",
    "soldAmount",
    "proceeds",
    "effectiveRateRay",
    "ordersFilled",
    "filledAt",
}


@dataclass(frozen=True)
class Settled:
    swap: dict[str, Any]
    filled: dict[str, Any]  # the swap record once FILLED
    tx_hash: str
    sold: int
    proceeds: int


def _settle_four_orders(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> Settled:
    """Three makers rest four whole orders; a taker swaps for all of them (requireFullFill) and
    sends the batch itself, no /submit; balances checked exactly."""
    exact = target.is_simulator
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    # Three makers, four whole orders: one maker rests two.
    terms = [(0, 1500, "1"), (1, 1480, "1"), (2, 2900, "2"), (0, 700, "0.5")]
    makers = [
        funded_maker(chain, source, {ngns: ngns.units(1500 + 700)}),
        funded_maker(chain, source, {ngns: ngns.units(1480)}),
        funded_maker(chain, source, {ngns: ngns.units(2900)}),
    ]
    order_ids = []
    for index, sells, wants in terms:
        order_ids.append(
            place(
                integrator,
                clock,
                chain,
                makers[index],
                ngns,
                ngns.units(sells),
                usdc,
                buy_amount=usdc.units(wants),
            ).order_id
        )
    outputs = [usdc.units(w) for _, _, w in terms]
    steer = {"restrictedLiquidityWallets": [m.address for m in makers]}
    offers = order_book(integrator.client, chain, usdc, ngns, **steer)["offers"]
    sold = sum(int(o["sellAmount"]) for o in offers)  # every output plus its fee
    assert len(offers) == 4, offers
    assert sold == sum(o + fee_of(o) for o in outputs) or not exact, sold
    proceeds = ngns.units(sum(s for _, s, _ in terms))
    taker = funded_taker(chain, source, {usdc: sold + usdc.units(1)})
    swap = create_swap(
        integrator.client,
        swap_body(chain, usdc, ngns, sold, taker.address, requireFullFill=True, **steer),
    )
    if exact:  # the 201 body is rfqsim's (B15)
        assert len(swap["orders"]) == 4
        assert (swap["soldAmount"], swap["buyAmount"]) == (str(sold), str(proceeds))
    fee_recipient = chain.contracts.get("fee_recipient")
    holders = [taker.address, *(m.address for m in makers)]
    before = Balances.read(chain.rpc(), [usdc.address, ngns.address], holders)
    tx_hash = execute_swap(chain, taker, swap)  # no /submit: the indexer reconciles it
    filled = wait_swap(integrator.client, swap["id"], "FILLED", timeout=WAIT_S)
    after = before.again()
    assert before.delta(after, usdc.address, taker.address) == -sold
    assert before.delta(after, ngns.address, taker.address) == proceeds
    if fee_recipient:  # shared by every fill: what this one paid it, from its own logs
        receipt = chain.rpc().wait_receipt(tx_hash)
        assert token_delta(receipt, usdc.address, fee_recipient) == sold - sum(outputs)
    assert before.delta(after, ngns.address, makers[0].address) == -ngns.units(2200)
    assert before.delta(after, usdc.address, makers[0].address) == usdc.units("1.5")
    assert before.delta(after, usdc.address, makers[1].address) == usdc.units(1)
    assert before.delta(after, usdc.address, makers[2].address) == usdc.units(2)
    if exact:  # the swap record is rfqsim's (B15)
        assert filled["txHash"] == tx_hash
        assert (filled["proceeds"], filled["soldAmount"]) == (str(proceeds), str(sold))
        assert filled["effectiveRateRay"] == str(rate(sold, 6, proceeds, 6))
        parse_iso_utc(filled["filledAt"])
    for order_id in order_ids:
        record = wait_order(integrator.client, order_id, "FILLED")
        assert str(record["txHash"]).lower() == tx_hash
    return Settled(swap, filled, tx_hash, sold, proceeds)


@pytest.mark.spec(
    "v1/overview/item-2",
    "v1/overview/non-custodial",
    "v1/endpoints/post-v1-swaps",
    "v1/endpoints/post-v1-swaps-id-submit",
    "v1/states/swap-status/transitions-between-swap-statuses",
    "v1/resources/create-swap-request/requirefullfill",
)
@pytest.mark.needs("taker_wallet")
def test_a_swap_of_several_whole_orders_settles_with_exact_balances(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    settled = _settle_four_orders(integrator, clock, chain, source, target)
    # Reporting the hash afterwards is accepted (same hash); another hash conflicts.
    path = f"/v1/swaps/{settled.swap['id']}/submit"
    answer = assert_data(integrator.client.post(path, json={"txHash": settled.tx_hash}))
    assert answer["status"] == "FILLED"
    assert_error(integrator.client.post(path, json={"txHash": "0x" + "ee" * 32}), 409, "conflict")


@pytest.mark.spec(
    "v1/events/fires-when-tracked-swap",
    "v1/events/swap-filled-body",
    "v1/events/headers-service-event-id-service-signature-signature",
    "v1/events/v1-event-types-swap-filled",
)
@pytest.mark.needs("taker_wallet", "webhook_url")
def test_swap_filled_reaches_the_receiver_signed(
    integrator: Integrator,
    clock: Clocked,
    chain: VenueChain,
    source: Wallet,
    target: Target,
    receiver: WebhookReceiver,
) -> None:
    endpoint = register_endpoint(integrator, receiver.url, ["swap.filled"])
    try:
        settled = _settle_four_orders(integrator, clock, chain, source, target)
        (got,) = receiver.wait_for_event(
            "swap.filled", settled.swap["id"], timeout=WAIT_S, secret=endpoint["signingSecret"]
        )
    finally:  # a given key's partner is shared: leave no endpoint behind for later tests
        integrator.client.delete(f"/v1/webhooks/{endpoint['id']}")
    swap, sold, proceeds = settled.swap, settled.sold, settled.proceeds
    event = verified_event(endpoint["signingSecret"], got.headers, got.raw_body)
    assert set(event) == {"id", "type", "created", "data"}
    assert (event["id"], event["type"]) == (f"swap.filled:{swap['id']}", "swap.filled")
    body = event["data"]["swap"]
    assert set(body) == SWAP_EVENT_FIELDS, sorted(body)
    assert body == {
        "id": swap["id"],
        "chainId": chain.chain_id,
        "txHash": settled.tx_hash,
        "soldAmount": str(sold),
        "proceeds": str(proceeds),
        "effectiveRateRay": str(rate(sold, 6, proceeds, 6)),
        "ordersFilled": 4,
        "filledAt": settled.filled["filledAt"],
    }


@pytest.mark.sim_only(because="decision")
@pytest.mark.spec(
    "v1/states/swap-status/transitions-between-swap-statuses",
    "v1/states/swap-status/values",
    "v1/endpoints/get-v1-swaps-id",
)
@pytest.mark.needs("taker_wallet")
def test_a_quoted_swap_whose_order_is_cancelled_reads_cancelled(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    """Decision (docs/decisions.md "v1 book" B16): the transitions are not shown."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    maker = funded_maker(chain, source, {ngns: ngns.units(1500)})
    placed = place(
        integrator, clock, chain, maker, ngns, ngns.units(1500), usdc, buy_amount=usdc.units(1)
    )
    swap = create_swap(
        integrator.client,
        swap_body(
            chain,
            usdc,
            ngns,
            1_000_500,
            Wallet.create().address,
            restrictedLiquidityWallets=[maker.address],
        ),
    )
    invalidate_nonce(chain, maker, placed.nonce)
    cancelled = wait_swap(integrator.client, swap["id"], "CANCELLED")
    assert cancelled["cancelReason"] == "order_cancelled"
    assert get_order(integrator.client, placed.order_id)["status"] == "CANCELLED"
    resp = integrator.client.post(
        f"/v1/swaps/{swap['id']}/submit", json={"txHash": "0x" + "ab" * 32}
    )
    assert_error(resp, 409, "conflict", "not_submittable")
