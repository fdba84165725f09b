"""The `soliciting` state (spec 1-rfq-v2 "States and transitions": "(none) → soliciting on POST
/v2/rfq/request while makers are being asked; not normally visible to callers"; decisions R17).

A caller learns an RFQ's id and claim token only from the answer, which comes after the makers
were asked, so it never sees `soliciting`. The test sees the auction from a maker's side
instead: a maker bot of its own (conformance/deployment/maker_probe.py), the only maker the request
allows and one that never answers, receives the firm request with its rfqId while the caller is
still waiting; the partner's key then reads the record as `soliciting`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from eth_account import Account

from conformance.calls.rfq_calls import expect_no_quote, request_quote, rfq_body
from conformance.deployment.maker_probe import MakerProbe, new_maker_key, stream_url
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error

REPLY_BUDGET_S = 0.75


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/states/none-post-v2-rfq-request",
    "rfq/states/soliciting-maker-replies-within-reply-budget-to-no_quote",
    "rfq/resources/rfq-record/status",
    "rfq/endpoints/request-body/behaviour-1",
)
def test_soliciting_lasts_while_makers_are_asked_and_is_never_answered(
    target: Target, sim: SimControl, http: Client, trader: Client, chain: VenueChain
) -> None:
    key, wallet = new_maker_key(sim)
    usdt = chain.token("USDT")
    body = rfq_body(
        chain,
        "NGNS",
        "USDT",
        buy_amount=usdt.units(1),  # exact output: no funds needed for a no-quote
        taker=Account.create().address,
        restrictedLiquidityWallets=[wallet],  # only the silent probe is asked
    )
    with (
        MakerProbe(stream_url(target.base_url), key, reply="silent") as maker,
        ThreadPoolExecutor(max_workers=1) as pool,
    ):
        pending = pool.submit(request_quote, trader, body)
        seen = maker.wait_rfq(timeout=5)
        rfq_id = str(seen.message["rfqId"])
        assert not pending.done(), "the caller was answered before the maker was asked"
        # While the makers are being asked the RFQ exists, as soliciting, for an owner
        # that knows its id (here from the maker's side) ...
        during = assert_data(trader.get(f"/v2/rfq/{rfq_id}"))
        still_waiting = not pending.done()
        # ... and for nobody else: no claim token exists for anyone yet.
        assert_error(http.get(f"/v2/rfq/{rfq_id}"), 404, "not_found")
        data = pending.result(timeout=REPLY_BUDGET_S + 10)
    assert still_waiting, "the answer came before the record was read: no proof of the state"
    assert during["rfqId"] == rfq_id, during
    assert during["status"] == "soliciting", during
    assert during["expiresAt"] is None, during
    assert during["noQuoteReason"] is None, during
    assert during["replyBy"] >= during["createdAt"], during
    # The caller's answer is never soliciting: the auction had ended.
    assert data["rfqId"] == rfq_id, data
    expect_no_quote(data, "no_restricted_liquidity")
    after = assert_data(trader.get(f"/v2/rfq/{rfq_id}"))
    assert after["status"] == "no_quote", after
    assert after["noQuoteReason"] == "no_restricted_liquidity", after
