"""A v1 limit order's status as any client sees it, with real transactions and no control
(spec 3 "Limit order status"): a fastFill order is filled by the filling operator within
seconds and pays the maker exactly what it asked; an order past its deadline reads EXPIRED at
once (a 90 s deadline, waited out in real time), having cost the maker no gas; a maker's early
cancel on chain (nonce invalidation) reads CANCELLED at once, verified. The events these
transitions send, the lag before expired/cancelled notices and the chain faults are in
test_v1_limit_orders_lifecycle.py (they need the simulator's clock and faults).
"""

from __future__ import annotations

import math
import time

import pytest

from conformance.calls.v1_book import (
    Integrator,
    funded_maker,
    get_order,
    invalidate_nonce,
    place,
)
from conformance.calls.v1_target import (
    book_chain,  # noqa: F401  (overrides the chain fixture)
    fast_filled,
)
from conformance.deployment.service_clock import Clocked
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.response_checks import assert_data
from rfqkit.wallets import Wallet

pytestmark = pytest.mark.needs("key:v1", "taker_wallet")

WAIT_S = 20.0
# Long enough to prepare, sign and submit through a client pacing a shared key (a 429's wait
# is up to the 60 s window) before the deadline passes.
SHORT_TTL_S = 90


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-quote/fastfill-crosses-best-market-maker",
    "v1/states/limit-order-status/active-or-cancelled-fill-reconciles",
    "v1/states/limit-order-status/rules",
    "v1/endpoints/get-v1-limit-orders-id/once-reconciled-txhash-filledat",
    "v1/endpoints/post-v1-limit-orders-prepare/proceeds-always-pay-maker",
    "v1/endpoints/post-v1-limit-orders-prepare/mode-fastfill-documented-value",
)
def test_a_fast_fill_order_is_filled_within_seconds_paying_the_maker(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet
) -> None:
    fast_filled(integrator, clock, chain, source)


@pytest.mark.spec(
    "v1/states/limit-order-status/active-read-to-expired",
    "v1/endpoints/get-v1-limit-orders/status-is-derived-live",
    "v1/endpoints/post-v1-limit-orders/placing-letting-order-expire",
)
@pytest.mark.needs(f"time<={SHORT_TTL_S + 10}s")
def test_an_order_past_its_deadline_reads_expired_at_once_and_cost_no_gas(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(1500)  # an ask nobody takes
    maker = funded_maker(chain, source, {ngns: sell})
    gas_before = chain.rpc().native_balance(maker.address)
    placed = place(
        integrator,
        clock,
        chain,
        maker,
        ngns,
        sell,
        usdc,
        buy_amount=usdc.units(1),
        ttl_s=SHORT_TTL_S,
    )
    assert get_order(integrator.client, placed.order_id)["status"] == "ACTIVE"
    deadline = int(placed.body["deadline"])
    # Time passes until the service clock is a second past the deadline; the very next
    # read says EXPIRED (derived live, not left to a sweep).
    wait_s = max(0.0, deadline + 1 - clock.now_ms() / 1000)
    if target.controllable:
        target.sim().advance(math.ceil(wait_s))  # the simulator's clock, not real time
    else:
        time.sleep(wait_s)
    record = get_order(integrator.client, placed.order_id)
    assert (record["status"], record["statusVerified"]) == ("EXPIRED", True)
    listed = assert_data(
        integrator.client.get(
            "/v1/limit-orders", params={"chainId": chain.chain_id, "wallet": maker.address}
        )
    )
    assert [o["status"] for o in listed] == ["EXPIRED"]
    # Placing and letting it expire cost the maker no gas (only its one approval).
    assert chain.rpc().native_balance(maker.address) == gas_before


@pytest.mark.spec(
    "v1/states/limit-order-status/active-read-or-sweep",
    "v1/states/limit-order-status/cancelled-statusverified-true-only",
    "v1/endpoints/get-v1-limit-orders/status-is-derived-live",
)
def test_a_maker_cancel_on_chain_reads_cancelled_at_once(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet
) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(1500)
    maker = funded_maker(chain, source, {ngns: sell})
    placed = place(integrator, clock, chain, maker, ngns, sell, usdc, buy_amount=usdc.units(1))
    assert get_order(integrator.client, placed.order_id)["status"] == "ACTIVE"
    invalidate_nonce(chain, maker, placed.nonce)  # the early cancel: a transaction of the maker
    record = get_order(integrator.client, placed.order_id)
    assert (record["status"], record["statusVerified"]) == ("CANCELLED", True)
    assert (record["txHash"], record["filledAt"]) == (None, None)
