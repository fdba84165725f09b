"""The life of an RFQ after the quote (spec 1-rfq-v2 "States and transitions", "Cancel, submit,
status", "Limits"): cancel and submit rules, a reported transaction that never lands, a quote
that lapses and is then filled late, and the outstanding-RFQ cap.

Time moves with POST /_sim/clock/advance (the service clock and both chains' block time); the
clock is shared by the worker and only goes forward, so every advance here is the minimum that
crosses the boundary under test.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from eth_account import Account

from conformance.calls.control import Fleet, Janitor, Liquidity, limits
from conformance.calls.rfq_calls import (
    approve_for_quote,
    broadcast_swap,
    cancel,
    eoa_proof,
    execute_quote,
    expect_no_quote,
    expect_quoted,
    get_record,
    keyed_client,
    keyless_client,
    new_key,
    random_tx_hash,
    request_quote,
    rfq_body,
    submit,
    wait_status,
)
from conformance.checks.assertions import (
    assert_filled_record,
    assert_firm_quote,
    assert_settled,
    iso_seconds,
)
from conformance.checks.resource_checks import assert_record_fields
from conformance.checks.stable_reads import KINDS, a_second_later, assert_stable
from conformance.deployment.funding import Balances, fund_wallet
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import TxFailed, wait_for
from conformance.wire.client import Client, Response
from conformance.wire.response_checks import assert_data, assert_error, parse_iso_utc
from rfqkit.wallets import Wallet

CHAIN = 97
SWEEP_TIMEOUT = 5.0  # how long a status change may take after its boundary passed


def size(chain: VenueChain) -> int:
    """What the tests here sell: ten times the chain's minimum (0.1 USDT on chain 97), small as
    a QA team's wallet pays for what is traded away, and still a size makers quote."""
    return chain.token("USDT").units(chain.min_size * 10)


@pytest.fixture
def taker(chain: VenueChain, source: Wallet) -> Wallet:
    usdt = chain.token("USDT")
    return fund_wallet(chain, source, {usdt.address: 20 * size(chain)})


def _quote(client: Client, chain: VenueChain, taker: Wallet, **extra: Any) -> dict[str, Any]:
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=size(chain), taker=taker.address, **extra)
    return expect_quoted(request_quote(client, body))


def _no_quote(client: Client, chain: VenueChain, taker: Wallet) -> dict[str, Any]:
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=size(chain),
        taker=taker.address,
        restrictedLiquidityWallets=[Account.create().address],
    )
    return expect_no_quote(request_quote(client, body), "no_restricted_liquidity")


def _conflict(resp: Response) -> None:
    assert_error(resp, 409, "conflict")


def _maker_released(fleet: Fleet, name: str, at_most: int) -> None:
    def probe() -> bool | None:
        return True if fleet.live_quotes()[name] <= at_most else None

    wait_for(probe, what=f"{name} to stop holding inventory for the quote")


# -- cancel -------------------------------------------------------------------------------


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/states/quoted-post-v2-rfq-id-cancel",
    "rfq/endpoints/post-v2-rfq-id-cancel",
    "rfq/endpoints/cancel-submit-status/cancel-releases-rfqs-claim",
    "rfq/endpoints/cancel-submit-status/ownership",
)
def test_cancel_releases_the_makers_and_any_key_of_the_partner_owns_the_rfq(
    target: Target,
    sim: SimControl,
    http: Client,
    chain: VenueChain,
    taker: Wallet,
    fleet: Fleet,
    kept: Janitor,
) -> None:
    """What a client cannot see on its own (the rest of the cancel rules:
    test_cancel_rules_seen_by_one_client): the makers' reservation dropped, and a second key
    of the creating partner owning the RFQ without the claim token."""
    partner = f"conformance-lifecycle-{Account.create().address[2:10].lower()}"
    creator = keyed_client(http, new_key(sim, "test", partner=partner))
    colleague = keyed_client(http, new_key(sim, "test", partner=partner))
    anyone = keyless_client(target, http)
    live_before = fleet.live_quotes()
    first = kept.keep(creator, _quote(creator, chain, taker))
    winner = fleet.name_of(first["quote"]["orders"][0]["maker"])
    released = assert_data(cancel(anyone, first["rfqId"], first["claimToken"]))
    assert released == {"rfqId": first["rfqId"], "status": "released"}, released
    _maker_released(fleet, winner, live_before[winner])

    second = kept.keep(creator, _quote(creator, chain, taker))
    released = assert_data(colleague.post(f"/v2/rfq/{second['rfqId']}/cancel"))
    assert released == {"rfqId": second["rfqId"], "status": "released"}, released


@pytest.mark.needs("key:trades", "taker_wallet")
@pytest.mark.spec(
    "rfq/states/quoted-post-v2-rfq-id-cancel",
    "rfq/states/cancel-response-reports-status",
    "rfq/states/rule-1",
    "rfq/endpoints/post-v2-rfq-id-cancel",
    "rfq/endpoints/cancel-submit-status/cancel-releases-rfqs-claim",
    "rfq/overview/call-sequence/post-v2-rfq-id-cancel",
    "rfq/auth/claim-token/without-key-only-authorization",
    "rfq/errors/404-not_found",
    "rfq/errors/409-conflict",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    *KINDS["rfq"].rules,
)
def test_cancel_rules_seen_by_one_client(
    target: Target,
    trader: Client,
    http: Client,
    chain: VenueChain,
    taker: Wallet,
    liquidity: Liquidity,
    kept: Janitor,
) -> None:
    """The cancel rules a client sees without control: the claim token alone cancels, a
    stranger gets 404, a second cancel, a filled, a no_quote or a submitted RFQ 409, and a
    cancelled quote can still be filled on chain; the record read once quoted and again once
    filled shows the same immutable fields."""
    anyone = keyless_client(target, http)
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    first = kept.keep(trader, _quote(trader, chain, taker))
    rfq_id, token = first["rfqId"], first["claimToken"]
    quoted = get_record(trader, rfq_id)  # read again once filled: the same
    quoted_at = time.monotonic()
    assert_error(cancel(anyone, rfq_id, "rfqc_" + "x" * 43), 404, "not_found")
    assert_error(anyone.post(f"/v2/rfq/{rfq_id}/cancel"), 404, "not_found")
    released = assert_data(cancel(anyone, rfq_id, token))
    assert released == {"rfqId": rfq_id, "status": "released"}, released
    _conflict(cancel(anyone, rfq_id, token))
    _conflict(trader.post(f"/v2/rfq/{rfq_id}/cancel"))

    checked = assert_firm_quote(
        chain, first, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=size(chain)
    )
    before = Balances.read(
        chain.rpc(),
        [usdt.address, ngns.address],
        [taker.address],
    )
    tx_hash = execute_quote(chain, taker, first)
    later = a_second_later(quoted_at)
    record = wait_status(trader, rfq_id, None, "filled")
    assert_filled_record(record, checked)
    assert_stable("rfq", rfq_id, quoted, record, what=later)
    assert_settled(
        before,
        before.again(),
        chain,
        checked,
        taker=taker.address,
        sell="USDT",
        buy="NGNS",
        tx_hash=tx_hash,
    )
    _conflict(cancel(anyone, rfq_id, token))

    nothing = _no_quote(trader, chain, taker)
    _conflict(cancel(anyone, nothing["rfqId"], nothing["claimToken"]))
    third = kept.keep(trader, _quote(trader, chain, taker))
    assert_data(submit(trader, third["rfqId"], None, random_tx_hash()))
    _conflict(cancel(trader, third["rfqId"], None))


# -- submit -------------------------------------------------------------------------------


@pytest.mark.needs("key:trades", "taker_wallet")
@pytest.mark.spec(
    "rfq/states/quoted-post-v2-rfq-id-submit",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "rfq/states/rule-4",
    "rfq/endpoints/post-v2-rfq-id-submit",
    "rfq/endpoints/cancel-submit-status/submit-body",
    "rfq/endpoints/response-body-submit-beyond",
    "rfq/states/rfq-status-values",
    "rfq/resources/rfq-record/txhash",
    "rfq/resources/rfq-record/submittedat-filledat",
    "rfq/errors/409-conflict",
    "rfq/errors/400-invalid_request",
)
def test_submit_rules(
    trader: Client, chain: VenueChain, taker: Wallet, liquidity: Liquidity, kept: Janitor
) -> None:
    data = kept.keep(trader, _quote(trader, chain, taker))
    rfq_id = data["rfqId"]
    malformed: list[Any] = [
        "0x1234",
        "0x" + "ab" * 31,  # 31 bytes
        "0x" + "ab" * 33,
        "ab" * 32,  # no 0x
        "0x" + "zz" * 32,
        12345,
        None,
    ]
    for bad in malformed:
        assert_error(
            trader.post(f"/v2/rfq/{rfq_id}/submit", json={"txHash": bad}), 400, "invalid_request"
        )
    assert_error(trader.post(f"/v2/rfq/{rfq_id}/submit", json={}), 400, "invalid_request")
    assert get_record(trader, rfq_id)["status"] == "quoted", "a bad submit changes nothing"

    reported = random_tx_hash()
    record = assert_data(submit(trader, rfq_id, None, reported))
    assert_record_fields(record)
    assert not {"claimToken", "signature", "encodedOrder"} & set(record), record
    assert record["status"] == "submitted", record
    assert record["txHash"] == reported, record
    parse_iso_utc(record["submittedAt"])
    again = assert_data(submit(trader, rfq_id, None, reported))  # idempotent
    assert again["status"] == "submitted", again
    assert again["submittedAt"] == record["submittedAt"], again
    _conflict(submit(trader, rfq_id, None, random_tx_hash()))  # another hash
    after = get_record(trader, rfq_id)
    assert after["txHash"] == reported, after

    # The reported hash never lands, but the quote settles in another transaction: the fill
    # is seen on chain whatever was reported.
    execute_quote(chain, taker, data)
    filled = wait_status(trader, rfq_id, None, "filled")
    assert filled["failReason"] is None, filled

    # No quote, nothing to submit.
    nothing = _no_quote(trader, chain, taker)
    _conflict(submit(trader, nothing["rfqId"], None, random_tx_hash()))


# -- time: not landed, expiry, late fill -----------------------------------------------------


@pytest.mark.sim_only(because="clock")
@pytest.mark.spec(
    "rfq/states/submitted-signed-order-deadline-passes",
    "rfq/states/rfq-status-values",
    "rfq/resources/rfq-record/failreason",
    "rfq/resources/rfq-record/status",
    "rfq/states/rule-2",
    "rfq/limits/slot-lifetime",
    "rfq/limits/outstanding-rfqs",
    "rfq/resources/firm-quote/quote-fields/orderdeadline",
    "rfq/resources/firm-quote/quote-fields/latestorderdeadline",
    "rfq/errors/429-rate_limited",
)
def test_submitted_transaction_that_never_lands_fails_at_the_order_deadline(
    sim: SimControl, trader: Client, chain: VenueChain, taker: Wallet, fleet: Fleet
) -> None:
    with limits(sim, outstanding_default=1):
        data = _quote(trader, chain, taker)
        rfq_id, quote = data["rfqId"], data["quote"]
        reported = random_tx_hash()  # never lands
        assert assert_data(submit(trader, rfq_id, None, reported))["status"] == "submitted"
        # One outstanding slot, held by the submitted quote.
        again = rfq_body(chain, "USDT", "NGNS", sell_amount=10**18, taker=taker.address)
        _cap_hit(trader.post("/v2/rfq/request", json=again), 1)
        approve_for_quote(chain, taker, data)

        # Past expiresAt but before the order deadline: still submitted (it may yet land).
        sim.advance_past(iso_seconds(quote["expiresAt"]))
        assert get_record(trader, rfq_id)["status"] == "submitted"
        # Past the order deadline: failed, not_landed.
        sim.advance_past(iso_seconds(quote["orderDeadline"]))
        record = wait_status(trader, rfq_id, None, {"failed"}, timeout=SWEEP_TIMEOUT)
        assert record["failReason"] == "not_landed", record
        assert record["txHash"] == reported, record
        assert record["filledAt"] is None, record
        # Past the deadline the signed order reverts on chain.
        deadline = iso_seconds(quote["orderDeadline"])
        assert chain.rpc().block_timestamp() > deadline, "the chain's time follows the clock"
        with pytest.raises(TxFailed):
            broadcast_swap(chain, taker, data)
        assert get_record(trader, rfq_id)["status"] == "failed"
        # The slot was held until latestOrderDeadline: free again now.
        expect_quoted(request_quote(trader, again))


@pytest.mark.sim_only(because="clock")
@pytest.mark.spec(
    "rfq/states/quoted-quote-lapses",
    "rfq/states/rfq-status-values",
    "rfq/states/failed-or-expired-late-indexed-fill",
    "rfq/states/rule-1",
    "rfq/states/rule-2",
    "rfq/states/rule-6",
    "rfq/overview/properties-that-must-hold/price-held-briefly-firm",
    "rfq/resources/rfq-record/expiresat",
    "rfq/resources/firm-quote/quote-fields/expiresat",
    "rfq/resources/rfq-record/sellamount-buyamount-feeamount",
)
def test_lapsed_quote_expires_and_a_late_fill_corrects_it(
    sim: SimControl, trader: Client, chain: VenueChain, taker: Wallet, fleet: Fleet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    live_before = fleet.live_quotes()
    data = _quote(trader, chain, taker)
    rfq_id, quote = data["rfqId"], data["quote"]
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=size(chain)
    )
    winner = fleet.name_of(checked.makers[0])
    approve_for_quote(chain, taker, data)

    sim.advance_past(iso_seconds(quote["expiresAt"]))
    record = wait_status(trader, rfq_id, None, "expired", timeout=SWEEP_TIMEOUT)
    assert record["expiresAt"] == quote["expiresAt"], record
    assert record["filledAt"] is None, record
    # Lapsed: no submit, no cancel; the makers no longer count it.
    _conflict(submit(trader, rfq_id, None, random_tx_hash()))
    _conflict(cancel(trader, rfq_id, None))
    _maker_released(fleet, winner, live_before[winner])

    # The signed order is still executable until its deadline: a late fill corrects the status.
    now = sim.now_ms() / 1000
    assert now < iso_seconds(quote["orderDeadline"]), "the order deadline must not have passed"
    before = Balances.read(
        chain.rpc(),
        [usdt.address, ngns.address],
        [taker.address],
    )
    tx_hash = broadcast_swap(chain, taker, data)
    record = wait_status(trader, rfq_id, None, "filled")
    assert_filled_record(record, checked, tx_hash=tx_hash)
    assert_settled(
        before,
        before.again(),
        chain,
        checked,
        taker=taker.address,
        sell="USDT",
        buy="NGNS",
        tx_hash=tx_hash,
    )


@pytest.mark.needs("key:trades", "taker_wallet", "time<=75s")
@pytest.mark.spec(
    "rfq/states/quoted-quote-lapses",
    "rfq/states/rfq-status-values",
    "rfq/overview/properties-that-must-hold/price-held-briefly-firm",
    "rfq/resources/rfq-record/expiresat",
    "rfq/errors/409-conflict",
)
def test_a_quote_nobody_takes_reads_expired_once_it_lapses(
    target: Target,
    trader: Client,
    chain: VenueChain,
    taker: Wallet,
    liquidity: Liquidity,
    clock: ServiceClock,
) -> None:
    """Without control the quote's life (at most the 60 s quote TTL) is waited out in real
    time; on a simulator the clock is moved past it."""
    data = _quote(trader, chain, taker)
    rfq_id, quote = data["rfqId"], data["quote"]
    if target.controllable:
        target.sim().advance_past(iso_seconds(quote["expiresAt"]))
    else:
        time.sleep(max(0.0, iso_seconds(quote["expiresAt"]) - clock.now_ms() / 1000 + 1))
    record = wait_status(trader, rfq_id, None, "expired", timeout=SWEEP_TIMEOUT)
    assert record["expiresAt"] == quote["expiresAt"], record
    assert record["filledAt"] is None, record
    _conflict(submit(trader, rfq_id, None, random_tx_hash()))
    _conflict(cancel(trader, rfq_id, None))


# -- the outstanding-RFQ cap ------------------------------------------------------------------


def _cap_hit(resp: Response, cap: int) -> dict[str, Any]:
    error = assert_error(resp, 429, "rate_limited", "outstanding_rfq_cap")
    assert "Retry-After" not in resp.headers, "the outstanding cap never sets Retry-After"
    assert error["details"].get("cap") == cap, error
    return error


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/outstanding-rfqs",
    "rfq/limits/slot-lifetime",
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/errors/429-rate_limited",
    "rfq/states/soliciting-maker-replies-within-reply-budget-to-no_quote",
    "rfq/states/quoted-post-v2-rfq-id-cancel",
    "rfq/endpoints/cancel-submit-status/cancel-releases-rfqs-claim",
    "rfq/auth/api-keys/key-gives-own-rate-limit",
)
def test_outstanding_cap_per_key(
    sim: SimControl, http: Client, chain: VenueChain, taker: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    key = new_key(sim, "test")
    trader = keyed_client(http, key)
    quotes = [kept.keep(trader, _quote(trader, chain, taker)) for _ in range(3)]
    for _ in range(3):  # a no-quote releases its slot at once
        _no_quote(trader, chain, taker)
    quotes.append(kept.keep(trader, _quote(trader, chain, taker)))
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=10**18, taker=taker.address)
    error = _cap_hit(trader.post("/v2/rfq/request", json=body), 4)
    # The next slot frees at the earliest latestOrderDeadline among the live quotes.
    earliest = min(iso_seconds(q["quote"]["latestOrderDeadline"]) for q in quotes)
    assert iso_seconds(error["details"]["nextSlotFreeAt"]) == earliest, error
    # Another key has a budget of its own.
    other = keyed_client(http, new_key(sim, "test"))
    kept.keep(other, _quote(other, chain, taker))
    # Cancel and submit do not give the slot back.
    assert_data(cancel(trader, quotes[0]["rfqId"], None))
    assert_data(submit(trader, quotes[1]["rfqId"], None, random_tx_hash()))
    _cap_hit(trader.post("/v2/rfq/request", json=body), 4)
    # A fill does.
    execute_quote(chain, taker, quotes[2])
    wait_status(trader, quotes[2]["rfqId"], None, "filled")
    kept.keep(trader, _quote(trader, chain, taker))
    _cap_hit(trader.post("/v2/rfq/request", json=body), 4)


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/outstanding-rfqs",
    "rfq/errors/429-rate_limited",
    "rfq/limits/retry-after-set-two-time-window",
)
def test_outstanding_cap_per_client_ip_without_a_key(
    target: Target, sim: SimControl, http: Client, chain: VenueChain, taker: Wallet, fleet: Fleet
) -> None:
    caller = keyless_client(target, http)
    proof = eoa_proof(sim, taker, CHAIN)  # earns a grant for the rest of the requests
    live = []
    for index in range(4):
        extra = {"takerProof": proof} if index == 0 else {}
        data = _quote(caller, chain, taker, **extra)
        live.append(data)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=10**18, taker=taker.address)
    _cap_hit(caller.post("/v2/rfq/request", json=body), 4)
    for data in live:
        cancel(caller, data["rfqId"], data["claimToken"])


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/outstanding-rfqs",
    "rfq/auth/api-keys/scopes",
    "rfq/errors/429-rate_limited",
)
def test_outstanding_cap_for_aggregator_keys(
    sim: SimControl, http: Client, chain: VenueChain, fleet: Fleet, kept: Janitor
) -> None:
    aggregator = keyed_client(
        http, new_key(sim, "test", ("trades:write", "trades:read", "rfq:aggregator"))
    )
    router = Wallet(chain.router, "")
    default_cap = sim.limits()["outstanding_aggregator"]
    assert default_cap == 32, "rfq:aggregator keys may hold 32 outstanding RFQs"
    with limits(sim, outstanding_aggregator=2):
        for _ in range(2):
            kept.keep(aggregator, _quote(aggregator, chain, router))
        body = rfq_body(chain, "USDT", "NGNS", sell_amount=10**18, taker=router.address)
        _cap_hit(aggregator.post("/v2/rfq/request", json=body), 2)
    # Back at the default cap, the same key may hold more.
    kept.keep(aggregator, _quote(aggregator, chain, router))
