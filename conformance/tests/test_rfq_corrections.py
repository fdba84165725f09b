"""The 24-hour correction window, and the spec's 500 row reached through the fault switch."""

from __future__ import annotations

import pytest

from conformance.calls.control import FAST, Fleet
from conformance.calls.rfq_calls import (
    approve_for_quote,
    broadcast_swap,
    expect_quoted,
    get_record,
    request_quote,
    rfq_body,
    wait_status,
)
from conformance.checks.assertions import iso_seconds
from conformance.deployment.funding import fund_wallet
from conformance.deployment.sim_control import SimControl
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import wait_for
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error
from rfqkit.wallets import Wallet

DAY = 86_400


@pytest.mark.sim_only(because="clock")
@pytest.mark.spec(
    "rfq/states/rule-3",
    "rfq/limits/correction-window",
    "rfq/events/after-24-hours-no",
)
def test_a_fill_after_the_correction_window_does_not_correct_the_status(
    sim: SimControl, trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet
) -> None:
    # One maker whose signed orders stay executable for three days after their cutoff.
    fleet.only({"alpha": {**FAST, "deadline_slack_s": 3 * DAY}})
    fleet.wait_levels(["alpha"])
    usdt = chain.token("USDT")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(5)})
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1), taker=taker.address)
    data = expect_quoted(request_quote(trader, body))
    quote = data["quote"]
    assert iso_seconds(quote["orderDeadline"]) - iso_seconds(quote["expiresAt"]) >= 2 * DAY
    approve_for_quote(chain, taker, data)

    sim.advance_past(iso_seconds(quote["expiresAt"]))
    wait_status(trader, data["rfqId"], None, "expired", timeout=5)
    sim.advance_past(sim.now_ms() / 1000 + DAY)  # more than 24 h after it became expired

    filled_before = fleet.member("alpha")["stats"]["filled"]
    tx_hash = broadcast_swap(chain, taker, data)  # the order is still valid on chain
    assert chain.rpc().wait_receipt(tx_hash)["status"] == "0x1"
    # The venue did see the fill (it tells the maker) ...
    wait_for(
        lambda: True if fleet.member("alpha")["stats"]["filled"] > filled_before else None,
        what="the simulator to index the late fill",
    )
    # ... and still does not correct a status that has been provisional for over 24 hours.
    record = get_record(trader, data["rfqId"])
    assert record["status"] == "expired", record
    assert record["filledAt"] is None, record
    assert record["txHash"] is None, record


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(
    "rfq/errors/500-internal", "rfq/errors/envelope", "rfq/errors/code-stable-message-not"
)
def test_server_fault_is_500_internal_in_the_envelope(sim: SimControl, http: Client) -> None:
    try:
        sim.call("POST", "faults", {"internal_errors": 1})
        resp = http.get("/v2/rfq/levels", params={"chainId": "97"})
        error = assert_error(resp, 500, "internal")
        assert "Traceback" not in error["message"]
        assert resp.headers.get("X-Request-Id") == error["request_id"]
        # One fault only: the next request is served normally.
        assert_data(http.get("/v2/rfq/levels", params={"chainId": "97"}))
    finally:
        sim.call("DELETE", "faults")
