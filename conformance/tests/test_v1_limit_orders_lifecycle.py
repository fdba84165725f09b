"""A v1 limit order's life after it rests (spec 3 "Limit order status", "Events"), end to end
with real transactions and a real https receiver: fastFilled by the filling operator within
seconds (FILLED, txHash, limit_order.filled delivered and verified); expired at read time and
reported after the deliberate lag; cancelled on chain by the maker (nonce invalidation) and
reported after the lag; a fill indexed after a cancel notice supersedes it; statusVerified false
while the chain cannot be read. The clock is the simulator's (/_sim/clock/advance); "nothing was
sent yet" is proven by waiting for a limit-order sweep that started after the moment in
question (GET /_sim/book), never by sleeping. What a client sees of these states without
control (filled within seconds, EXPIRED and CANCELLED read at once) is also in
test_v1_limit_orders_states.py, which runs against any deployment.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

from conformance.calls.control import faults
from conformance.calls.v1_book import (
    Integrator,
    create_swap,
    deliveries,
    execute_swap,
    fee_of,
    funded_maker,
    funded_taker,
    get_order,
    invalidate_nonce,
    place,
    register_endpoint,
    service_now,
    swap_body,
    verified_event,
    wait_for_sweep_since,
    wait_order,
)
from conformance.calls.v1_target import fast_filled
from conformance.deployment.service_clock import Clocked
from conformance.deployment.sim_control import SimControl
from conformance.deployment.venue import VenueChain
from conformance.wire.response_checks import assert_data, parse_iso_utc
from rfqkit.wallets import Wallet
from rfqkit.webhook_receiver import ReceivedRequest, WebhookReceiver

WAIT_S = 20.0
LAG_S = 600  # limit_order.expired / .cancelled wait about ten minutes past the deadline
SWEEP_S = 300  # ... plus the sweep cadence of five minutes
TTL_S = 300
EVENT_FIELDS = {"id", "type", "created", "data"}
LIMIT_ORDER_FIELDS = {
    "id",
    "chainId",
    "sellToken",
    "sellAmount",
    "buyToken",
    "buyAmount",
    "rateRay",
    "executionRateRay",
    "deadline",
    "txHash",
    "filledAt",
}


def check_limit_order_event(
    got: ReceivedRequest, secret: str, event_type: str, record: dict[str, Any]
) -> dict[str, Any]:
    event = verified_event(secret, got.headers, got.raw_body)
    assert got.method == "POST"
    assert set(event) == EVENT_FIELDS, sorted(event)
    assert event["id"] == f"{event_type}:{record['id']}"
    assert event["type"] == event_type
    parse_iso_utc(event["created"])
    body = event["data"]["limitOrder"]
    assert set(event["data"]) == {"limitOrder"}
    assert set(body) == LIMIT_ORDER_FIELDS, sorted(body)
    for name in LIMIT_ORDER_FIELDS - {"txHash", "filledAt"}:
        assert body[name] == record[name], (name, body, record)
    return event


def advance_past_the_lag(sim: SimControl, deadline_iso: str) -> float:
    """Move the clock to just past deadline + lag; returns the service time then."""
    deadline = parse_iso_utc(deadline_iso).timestamp()
    sim.advance(max(1, math.ceil(deadline + LAG_S - service_now(sim)) + 1))
    return service_now(sim)


def advance_and_sweep(sim: SimControl, seconds: int) -> None:
    """Advance the clock by at least one sweep interval and wait until the sweep that the
    advance made due has completed."""
    assert seconds > SWEEP_S
    before = service_now(sim)
    sim.advance(seconds)
    wait_for_sweep_since(sim, before + seconds)


def nothing_sent(sim: SimControl, event_id: str, receiver: WebhookReceiver) -> None:
    assert deliveries(sim, event_id) == [], f"{event_id} was sent before the lag"
    assert receiver.requests == [], "an event arrived before the lag"


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-quote/fastfill-crosses-best-market-maker",
    "v1/states/limit-order-status/active-or-cancelled-fill-reconciles",
    "v1/states/limit-order-status/rules",
    "v1/endpoints/get-v1-limit-orders-id/once-reconciled-txhash-filledat",
    "v1/endpoints/post-v1-limit-orders-prepare/proceeds-always-pay-maker",
    "v1/endpoints/post-v1-limit-orders-prepare/mode-fastfill-documented-value",
    "v1/events/endpoints-registered-through-v1",
    "v1/events/requires-webhooks-manage-url",
    "v1/events/v1-event-types-swap-filled",
    "v1/events/headers-service-event-id-service-signature-signature",
    "v1/events/limit_order-body",
    "v1/overview/item-2",
)
@pytest.mark.needs("taker_wallet", "webhook_url")
def test_a_fast_fill_order_is_filled_by_the_operator_within_seconds(
    integrator: Integrator,
    clock: Clocked,
    chain: VenueChain,
    source: Wallet,
    receiver: WebhookReceiver,
) -> None:
    endpoint = register_endpoint(integrator, receiver.url)
    _, record = fast_filled(integrator, clock, chain, source)
    tx_hash = str(record["txHash"])
    filled_at = parse_iso_utc(record["filledAt"]).timestamp()
    (got,) = receiver.wait_for_event(
        "limit_order.filled", record["id"], timeout=WAIT_S, secret=endpoint["signingSecret"]
    )
    event = check_limit_order_event(got, endpoint["signingSecret"], "limit_order.filled", record)
    body = event["data"]["limitOrder"]
    assert str(body["txHash"]).lower() == tx_hash.lower()
    assert parse_iso_utc(body["filledAt"]).timestamp() == filled_at


@pytest.mark.sim_only(because="clock")  # the 10-minute lag, proven by a sweep
@pytest.mark.spec(
    "v1/states/limit-order-status/active-read-to-expired",
    "v1/endpoints/get-v1-limit-orders/status-is-derived-live",
    "v1/endpoints/post-v1-limit-orders/placing-letting-order-expire",
    "v1/events/expired-cancelled-sent-deliberate",
    "v1/events/expired-cancelled-txhash-filledat",
    "v1/events/events-must-not-used",
    "v1/events/limit_order-body",
)
def test_an_expired_order_reads_expired_at_once_and_is_reported_after_the_lag(
    integrator: Integrator,
    sim: SimControl,
    chain: VenueChain,
    source: Wallet,
    receiver: WebhookReceiver,
) -> None:
    endpoint = register_endpoint(integrator, receiver.url)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(1500)  # an ask nobody takes
    maker = funded_maker(chain, source, {ngns: sell})
    gas_before = chain.rpc().native_balance(maker.address)
    placed = place(
        integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1), ttl_s=TTL_S
    )
    event_id = f"limit_order.expired:{placed.order_id}"
    # Past the deadline but inside the lag: a sweep runs, nothing is sent.
    advance_and_sweep(sim, TTL_S + 1)
    nothing_sent(sim, event_id, receiver)
    record = get_order(integrator.client, placed.order_id)
    assert (record["status"], record["statusVerified"]) == ("EXPIRED", True)
    listed = assert_data(
        integrator.client.get(
            "/v1/limit-orders", params={"chainId": chain.chain_id, "wallet": maker.address}
        )
    )
    assert listed[0]["status"] == "EXPIRED"
    sent_after = advance_past_the_lag(sim, record["deadline"])
    (got,) = receiver.wait_for_events(1, timeout=WAIT_S)
    event = check_limit_order_event(got, endpoint["signingSecret"], "limit_order.expired", record)
    body = event["data"]["limitOrder"]
    assert (body["txHash"], body["filledAt"]) == (None, None)
    deadline = parse_iso_utc(record["deadline"]).timestamp()
    created = parse_iso_utc(event["created"]).timestamp()
    assert deadline + LAG_S <= created <= max(sent_after, deadline + LAG_S) + SWEEP_S
    # Placing and letting it expire cost the maker no gas (only its one approval).
    assert chain.rpc().native_balance(maker.address) == gas_before


@pytest.mark.sim_only(because="clock")  # the 10-minute lag, proven by a sweep
@pytest.mark.spec(
    "v1/states/limit-order-status/active-read-or-sweep",
    "v1/states/limit-order-status/cancelled-statusverified-true-only",
    "v1/endpoints/get-v1-limit-orders/status-is-derived-live",
    "v1/endpoints/post-v1-limit-orders/placing-letting-order-expire",
    "v1/events/expired-cancelled-sent-deliberate",
    "v1/events/expired-cancelled-txhash-filledat",
)
def test_a_maker_cancel_on_chain_reads_cancelled_and_is_reported_after_the_lag(
    integrator: Integrator,
    sim: SimControl,
    chain: VenueChain,
    source: Wallet,
    receiver: WebhookReceiver,
) -> None:
    endpoint = register_endpoint(integrator, receiver.url)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(1500)
    maker = funded_maker(chain, source, {ngns: sell})
    placed = place(
        integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1), ttl_s=TTL_S
    )
    invalidate_nonce(chain, maker, placed.nonce)  # the early cancel: a transaction of the maker
    record = get_order(integrator.client, placed.order_id)
    assert (record["status"], record["statusVerified"]) == ("CANCELLED", True)
    assert (record["txHash"], record["filledAt"]) == (None, None)
    advance_and_sweep(sim, TTL_S + 1)
    nothing_sent(sim, f"limit_order.cancelled:{placed.order_id}", receiver)
    assert get_order(integrator.client, placed.order_id)["status"] == "CANCELLED"
    advance_past_the_lag(sim, record["deadline"])
    (got,) = receiver.wait_for_events(1, timeout=WAIT_S)
    event = check_limit_order_event(got, endpoint["signingSecret"], "limit_order.cancelled", record)
    assert (event["data"]["limitOrder"]["txHash"], event["data"]["limitOrder"]["filledAt"]) == (
        None,
        None,
    )
    assert get_order(integrator.client, placed.order_id)["status"] == "CANCELLED"


@pytest.mark.sim_only(because="clock")  # the 10-minute lag, proven by a sweep
@pytest.mark.spec(
    "v1/states/limit-order-status/active-or-cancelled-fill-reconciles",
    "v1/states/limit-order-status/active-read-or-sweep",
    "v1/events/expired-cancelled-sent-deliberate",
    "v1/states/limit-order-status/cancelled-statusverified-true-only",
)
def test_a_fill_indexed_after_a_cancel_notice_supersedes_it(
    integrator: Integrator,
    sim: SimControl,
    chain: VenueChain,
    source: Wallet,
    receiver: WebhookReceiver,
) -> None:
    """The fill lands before the deadline while the fill index is unreachable: the spent nonce
    reads CANCELLED (provisional), the sweep reports limit_order.cancelled after the lag, and
    when the index comes back the fill reconciles: FILLED and limit_order.filled."""
    endpoint = register_endpoint(integrator, receiver.url)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell, buy = ngns.units(1500), usdc.units(1)
    maker = funded_maker(chain, source, {ngns: sell})
    placed = place(integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=buy, ttl_s=TTL_S)
    taker = funded_taker(chain, source, {usdc: usdc.units(2)})
    with faults(sim, indexer_paused=[chain.chain_id]):
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
        record = get_order(integrator.client, placed.order_id)
        assert record["status"] == "CANCELLED", "a spent nonce with no fill found yet"
        advance_past_the_lag(sim, record["deadline"])
        cancelled = receiver.wait_for_events(1, timeout=WAIT_S)[0]
        check_limit_order_event(
            cancelled, endpoint["signingSecret"], "limit_order.cancelled", record
        )
    record = wait_order(integrator.client, placed.order_id, "FILLED", timeout=WAIT_S)
    assert str(record["txHash"]).lower() == tx_hash

    def filled_event() -> ReceivedRequest | None:
        for got in receiver.requests:
            if got.json()["type"] == "limit_order.filled":
                return got
        return None

    deadline = time.monotonic() + WAIT_S
    while (got := filled_event()) is None:
        assert time.monotonic() < deadline, "limit_order.filled never arrived"
        time.sleep(0.05)
    event = check_limit_order_event(got, endpoint["signingSecret"], "limit_order.filled", record)
    assert str(event["data"]["limitOrder"]["txHash"]).lower() == tx_hash
    # A receiver keyed on the order id ends at FILLED, whatever order the two arrive in.
    latest: dict[str, str] = {}
    for request in (got, cancelled, got):
        body = request.json()
        order_id = body["data"]["limitOrder"]["id"]
        if latest.get(order_id) != "limit_order.filled":
            latest[order_id] = body["type"]
    assert latest[placed.order_id] == "limit_order.filled"


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(
    "v1/states/limit-order-status/active-read-to-expired-with-statusverified-false",
    "v1/resources/limit-order-record/statusverified",
)
def test_status_is_unverified_while_the_chain_cannot_be_read(
    integrator: Integrator, sim: SimControl, chain: VenueChain, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(1500)
    maker = funded_maker(chain, source, {ngns: 2 * sell})
    live = place(integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1))
    lapsing = place(
        integrator, sim, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1), ttl_s=TTL_S
    )
    sim.advance(TTL_S + 1)
    with faults(sim, chain_unreachable=[chain.chain_id]):
        record = get_order(integrator.client, lapsing.order_id)
        assert (record["status"], record["statusVerified"]) == ("EXPIRED", False)
        record = get_order(integrator.client, live.order_id)
        assert (record["status"], record["statusVerified"]) == ("ACTIVE", False)
    record = get_order(integrator.client, lapsing.order_id)
    assert (record["status"], record["statusVerified"]) == ("EXPIRED", True)
