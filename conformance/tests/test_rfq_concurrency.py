"""Reservations and caps under real parallel requests: one wallet's balance cannot back two
quotes, and an outstanding-RFQ cap cannot be overshot by requests racing each other."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from conformance.calls.control import Fleet, Janitor
from conformance.calls.rfq_calls import keyed_client, new_key, rfq_body
from conformance.checks.assertions import iso_seconds
from conformance.deployment.funding import fund_wallet
from conformance.deployment.sim_control import SimControl
from conformance.deployment.venue import Venue, VenueChain
from conformance.wire.client import Client, Response
from rfqkit.wallets import Wallet

CHAIN = 97


def in_parallel(client: Client, bodies: list[dict[str, Any]]) -> list[Response]:
    """Send every request at once from its own thread (own connection)."""
    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        futures = [pool.submit(client.post, "/v2/rfq/request", json=b, timeout=75) for b in bodies]
        return [f.result() for f in futures]


def outcome(resp: Response) -> str:
    if resp.status == 200:
        return str(resp.body["data"]["status"])
    return f"{resp.status} {resp.body['error']['code']}"


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/endpoints/request-body/proof-of-funds",
    "rfq/errors/400-invalid_request",
)
def test_parallel_requests_cannot_spend_one_balance_twice(
    sim: SimControl, http: Client, chain: VenueChain, venue: Venue, fleet: Fleet, kept: Janitor
) -> None:
    usdt = chain.token("USDT")
    balance = usdt.units(10)
    source: Wallet = venue.demo_wallets[-1]
    taker = fund_wallet(chain, source, {usdt.address: balance}, native=0)
    trader = keyed_client(http, new_key(sim, "test"))
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(6), taker=taker.address)
    # Four at once: within the key's outstanding cap, so only the balance can refuse them.
    responses = in_parallel(trader, [dict(body) for _ in range(4)])
    counts = Counter(outcome(r) for r in responses)
    assert counts == Counter({"quoted": 1, "400 invalid_request": 3}), counts
    for resp in responses:
        if resp.status == 200:
            kept.keep(trader, resp.body["data"])
            continue
        details = resp.body["error"]["details"]
        assert details["reason"] == "insufficient_funds"
        assert details["available"] == str(balance)
        assert details["required"] == str(usdt.units(6))
        assert "committed" in details  # the winner's reservation caused every shortfall


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/outstanding-rfqs",
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/errors/429-rate_limited",
)
def test_parallel_requests_cannot_overshoot_the_outstanding_cap(
    sim: SimControl, http: Client, chain: VenueChain, venue: Venue, fleet: Fleet, kept: Janitor
) -> None:
    """30 at once on one key: 4 quotes, 26 refusals, and every refusal names when the next slot
    frees, the earliest latestOrderDeadline of the 4 quotes (not the provisional hold of the
    auctions still running when it arrived, about 5 s out)."""
    usdt = chain.token("USDT")
    trader = keyed_client(http, new_key(sim, "test"))
    taker = venue.demo_wallets[0]
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1), taker=taker.address)
    responses = in_parallel(trader, [dict(body) for _ in range(30)])
    counts = Counter(outcome(r) for r in responses)
    assert counts == Counter({"quoted": 4, "429 rate_limited": 26}), counts
    deadlines = []
    for resp in responses:
        if resp.status == 200:
            kept.keep(trader, resp.body["data"])
            deadlines.append(iso_seconds(resp.body["data"]["quote"]["latestOrderDeadline"]))
    for resp in responses:
        if resp.status != 200:
            assert resp.headers.get("Retry-After") is None
            details = resp.body["error"]["details"]
            assert details["reason"] == "outstanding_rfq_cap"
            assert details["cap"] == 4
            assert iso_seconds(details["nextSlotFreeAt"]) == min(deadlines), details
