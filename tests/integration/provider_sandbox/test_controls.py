"""The /sandbox controls and the provider API's error answers, over real HTTP."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from rfqkit.wallets import derive_wallet
from tests.integration.provider_sandbox.harness import CHAIN_ID, Harness, kyc_documents

pytestmark = pytest.mark.integration


async def test_webhooks_are_signed_and_follow_every_change(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-hooks").address
    customer_id = await harness.verified_customer(destination)
    _, body = await harness.buy(customer_id, destination, "20000", "ramp_hooks_1")
    transfer_id = body["transfer"]["id"]
    await harness.ok("POST", f"/transfers/{transfer_id}/pay-in", {"mode": "exact"})
    await harness.advance(15)
    await harness.wait_webhooks(4)

    assert harness.receiver.statuses(transfer_id) == [
        "funds_received",
        "funds_converted",
        "outgoing_payment_sent",
        "completed",
    ]
    assert all(e.signature_ok for e in harness.receiver.events)
    event = harness.receiver.events[-1].body
    assert event["type"] == "transfer.updated"
    assert event["id"].startswith("evt_")
    assert event["data"]["transfer"]["payOut"]["blockchain_hash"].startswith("0x")
    state = await harness.ok("GET", "/state")
    assert [r["outcome"] for r in state["webhooks"]["log"]] == ["delivered"] * 4


async def test_webhooks_can_be_dropped_and_delayed(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-hooks-drop").address
    customer_id = await harness.verified_customer(destination)
    _, body = await harness.buy(customer_id, destination, "20000", "ramp_hooks_drop")
    transfer_id = body["transfer"]["id"]

    await harness.ok("PUT", "/webhooks", {"mode": "drop"})
    await harness.ok("POST", f"/transfers/{transfer_id}/pay-in", {"mode": "exact"})
    await harness.ok("PUT", "/webhooks", {"mode": "delay", "delaySeconds": 60})
    await harness.advance(5)  # funds_converted, held for 60 clock seconds
    state = await harness.ok("GET", "/state")
    assert [r["outcome"] for r in state["webhooks"]["log"]] == ["dropped", "pending"]
    assert harness.receiver.events == []

    await harness.ok("PUT", "/webhooks", {"mode": "deliver"})
    await harness.ok("POST", f"/transfers/{transfer_id}/stall")
    await harness.advance(60)  # releases the held event; the stall keeps the transfer put
    await harness.wait_webhooks(1)
    assert harness.receiver.statuses(transfer_id) == ["funds_converted"]
    assert harness.receiver.events[0].signature_ok


async def test_unreachable_closes_api_connections_but_controls_answer(harness: Harness) -> None:
    await harness.ok("PUT", "/reachability", {"reachable": False})
    with pytest.raises(aiohttp.ClientConnectionError):
        await harness.api("GET", "/capabilities")
    state = await harness.ok("GET", "/state")
    assert state["reachable"] is False
    assert state["calls"]["GET /api/v1/capabilities"] >= 1

    await harness.ok("PUT", "/reachability", {"reachable": True})
    status, body = await harness.api("GET", "/capabilities")
    assert status == 200
    assert body["sandboxChains"] == [CHAIN_ID]


async def test_switches_and_reset(harness: Harness) -> None:
    await harness.ok(
        "PUT",
        "/switches",
        {"sides": {"sell": False}, "sandboxChains": [], "businessProfileSells": False},
    )
    _, caps = await harness.api("GET", "/capabilities")
    assert caps["sides"] == ["buy"]
    assert caps["sandboxChains"] == []
    assert caps["businessProfileSells"] is False
    status, body = await harness.api(
        "POST",
        "/quotes",
        {
            "side": "buy",
            "fiat": "NGN",
            "token": "NGNS",
            "chainId": CHAIN_ID,
            "amount": "1000",
            "sandbox": True,
        },
    )
    assert (status, body["error"]["type"]) == (422, "refused")
    await harness.ok("PUT", "/switches", {"enabled": False})
    status, body = await harness.api(
        "POST",
        "/quotes",
        {"side": "buy", "fiat": "NGN", "token": "NGNS", "chainId": CHAIN_ID, "amount": "1000"},
    )
    assert (status, body["error"]["type"]) == (503, "unavailable")
    await harness.verified_customer(derive_wallet("sandbox-test-reset").address)

    assert (await harness.ok("POST", "/reset")) == {"reset": True}
    state = await harness.ok("GET", "/state")
    assert state["customers"] == []
    assert state["transfers"] == []
    assert state["calls"] == {}
    assert state["capabilities"]["enabled"] is True
    assert state["capabilities"]["sides"] == ["buy", "sell"]
    assert state["capabilities"]["sandboxChains"] == [CHAIN_ID]


async def test_calls_are_counted_per_route_template(harness: Harness) -> None:
    transfer = await harness.sell("100", "ramp_calls_1", derive_wallet("calls").address)
    for _ in range(3):
        await harness.transfer(transfer["id"])
    await harness.api("GET", "/transfers?reference=ramp_calls_1")
    state = await harness.ok("GET", "/state")
    assert state["calls"]["GET /api/v1/transfers/{id}"] == 3
    assert state["calls"]["GET /api/v1/transfers"] == 1
    assert state["calls"]["POST /api/v1/transfers"] == 1
    assert state["calls"]["POST /api/v1/quotes"] == 1


async def test_errors_use_the_contract_envelope(harness: Harness) -> None:
    status, body = await harness.api("GET", "/banks", key="sk_wrong")
    assert (status, body["error"]["type"]) == (401, "unauthorized")
    async with harness.session.post(
        f"{harness.running.url}/api/v1/customers",
        data=b"{not json",
        headers={"Authorization": f"Bearer {harness.running.api_key}"},
    ) as response:
        assert response.status == 400
        assert (await response.json())["error"]["type"] == "invalid"
    status, body = await harness.api("POST", "/customers", {"reference": 5})
    assert (status, body["error"]["type"]) == (400, "invalid")
    status, body = await harness.api("GET", "/transfers/trf_nope")
    assert (status, body["error"]["type"]) == (404, "not_found")
    status, body = await harness.api(
        "POST", "/banks/resolve", {"bankCode": "999", "accountNumber": "0123456789"}
    )
    assert (status, body["error"]["type"]) == (404, "not_found")
    status, body = await harness.api(
        "POST", "/banks/resolve", {"bankCode": "058", "accountNumber": "1234560000"}
    )
    assert (status, body["error"]) == (
        422,
        {"type": "refused", "message": "We could not verify this bank account"},
    )
    status, body = await harness.control("PUT", "/switches", ["not", "an", "object"])
    assert (status, body["error"]["type"]) == (400, "invalid")
    status, body = await harness.control("PUT", "/webhooks", {"mode": "sometimes"})
    assert (status, body["error"]["type"]) == (400, "invalid")


async def test_duplicate_reference_and_deposit_cap(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-dup").address
    customer_id = await harness.verified_customer(destination)
    status, first = await harness.buy(customer_id, destination, "1000", "ramp_dup_1")
    assert status == 201
    status, body = await harness.buy(customer_id, destination, "1000", "ramp_dup_1")
    assert (status, body["error"]["type"]) == (409, "conflict")
    assert body["error"]["transfer"]["id"] == first["transfer"]["id"]
    status, body = await harness.buy(customer_id, destination, "5000000.01", "ramp_cap_1")
    assert (status, body["error"]["message"]) == (
        422,
        "Deposit exceeds the single-deposit limit",
    )
    await harness.ok("PUT", "/config", {"maxBuy": "10000000"})
    status, body = await harness.buy(customer_id, destination, "5000000.01", "ramp_cap_2")
    assert status == 201, body


async def test_customer_test_values(harness: Harness) -> None:
    person = {
        "type": "individual",
        "firstName": "Ngozi",
        "email": "n@example.com",
        "phone": "+2348000000000",
    }
    status, body = await harness.api(
        "POST", "/customers", {**person, "reference": "0xaa", "lastName": "Refused"}
    )
    assert (status, body["error"]["message"]) == (422, "We cannot onboard this person")
    status, body = await harness.api(
        "POST", "/customers", {**person, "reference": "0xbb", "lastName": "Blocked"}
    )
    assert status == 201
    blocked = body["customer"]["id"]
    await harness.api("POST", f"/customers/{blocked}/kyc", kyc_documents("A1"))
    await harness.advance(30)
    status, body = await harness.buy(blocked, derive_wallet("b").address, "1000", "ramp_blocked")
    assert (status, body["error"]["message"]) == (422, "This customer is not allowed to transact")


async def test_kyc_outcome_control_and_expiry_by_document(harness: Harness) -> None:
    person = {
        "type": "individual",
        "firstName": "Ola",
        "lastName": "Bello",
        "email": "o@example.com",
        "phone": "+2348000000001",
    }
    _, body = await harness.api("POST", "/customers", {**person, "reference": "0xcc"})
    customer_id = body["customer"]["id"]
    _, submitted = await harness.api(
        "POST", f"/customers/{customer_id}/kyc", kyc_documents("REJECT-1")
    )
    assert submitted["review"]["status"] == "awaiting_review"
    decided = await harness.ok(
        "POST", f"/customers/{customer_id}/kyc/outcome", {"outcome": "approve"}
    )
    assert decided["review"]["status"] == "approved"
    assert decided["review"]["canDeposit"] is True

    _, body = await harness.api("POST", "/customers", {**person, "reference": "0xdd"})
    other = body["customer"]["id"]
    await harness.api("POST", f"/customers/{other}/kyc", kyc_documents("EXPIRE-9"))
    await harness.advance(30)
    _, review = await harness.api("GET", f"/customers/{other}/kyc")
    assert review["review"]["status"] == "approved"
    await harness.advance(30)
    _, review = await harness.api("GET", f"/customers/{other}/kyc")
    assert review["review"]["status"] == "expired"
    assert review["review"]["requirementsDue"] == ["document"]
    _, link = await harness.api("POST", f"/customers/{other}/kyc/link")
    async with harness.session.get(link["url"]) as response:
        assert response.status == 200
        assert "Verify your identity" in await response.text()


async def test_quote_follows_rate_shift_and_expires(harness: Harness) -> None:
    quote_body = {
        "side": "buy",
        "fiat": "NGN",
        "token": "NGNS",
        "chainId": CHAIN_ID,
        "amount": "100000",
        "sandbox": True,
    }
    _, before = await harness.api("POST", "/quotes", quote_body)
    await harness.ok("POST", "/rates/shift", {"percent": "5"})
    _, after = await harness.api("POST", "/quotes", quote_body)
    # The mid moved 5 % (NGN per NGNS up): a buy gets about 5 % fewer NGNS.
    ratio = float(after["targetAmount"]) / float(before["targetAmount"])
    assert 0.94 < ratio < 0.96

    await harness.advance(61)
    customer_id = await harness.verified_customer(derive_wallet("quote-expiry").address)
    status, body = await harness.api(
        "POST",
        "/transfers",
        {
            "quoteId": after["quoteId"],
            "reference": "ramp_expired_quote",
            "customerId": customer_id,
            "sandbox": True,
            "destination": {"address": derive_wallet("q").address, "chainId": CHAIN_ID},
        },
    )
    assert (status, body["error"]["message"]) == (422, "The quote has expired")


async def test_cancel_and_forward_only_advance(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-cancel").address
    customer_id = await harness.verified_customer(destination)
    _, body = await harness.buy(customer_id, destination, "1000", "ramp_cancel_1")
    cancelled = await harness.ok("POST", f"/transfers/{body['transfer']['id']}/cancel")
    assert cancelled["transfer"]["status"] == "cancelled"

    _, body = await harness.buy(customer_id, destination, "1000", "ramp_adv_1")
    transfer_id = body["transfer"]["id"]
    short = await harness.ok(
        "POST", f"/transfers/{transfer_id}/pay-in", {"mode": "short", "amount": "400"}
    )
    assert short["transfer"]["status"] == "awaiting_funds"
    assert short["transfer"]["shortBy"] == "600.00"
    status, _ = await harness.control("POST", f"/transfers/{transfer_id}/cancel")
    assert status == 409
    moved = await harness.ok(
        "POST", f"/transfers/{transfer_id}/advance", {"to": "outgoing_payment_sent"}
    )
    assert moved["transfer"]["status"] == "outgoing_payment_sent"
    assert moved["transfer"]["payOut"]["blockchain_hash"].startswith("0x")
    status, body = await harness.control(
        "POST", f"/transfers/{transfer_id}/advance", {"to": "funds_received"}
    )
    assert (status, body["error"]["type"]) == (409, "conflict")
    done = await harness.ok("POST", f"/transfers/{transfer_id}/advance")
    assert done["transfer"]["status"] == "completed"


async def test_late_pay_in_after_the_window_is_still_processed(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-late").address
    customer_id = await harness.verified_customer(destination)
    _, body = await harness.buy(customer_id, destination, "1000", "ramp_late_1")
    transfer_id = body["transfer"]["id"]
    status, _ = await harness.control("POST", f"/transfers/{transfer_id}/pay-in", {"mode": "late"})
    assert status == 409  # the window is still open
    await harness.advance(31 * 60)
    late = await harness.ok("POST", f"/transfers/{transfer_id}/pay-in", {"mode": "late"})
    assert late["transfer"]["status"] == "funds_received"
    assert late["transfer"]["late"] is True


async def test_api_latency_holds_answers(harness: Harness) -> None:
    await harness.ok("PUT", "/config", {"apiLatencyMs": 300})
    loop = asyncio.get_running_loop()
    started = loop.time()
    status, _ = await harness.api("GET", "/banks")
    assert status == 200
    assert loop.time() - started >= 0.3


async def test_a_create_held_in_flight_is_already_booked(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-inflight").address
    customer_id = await harness.verified_customer(destination)
    await harness.ok("PUT", "/config", {"apiLatencyMs": 500})
    first = asyncio.create_task(harness.buy(customer_id, destination, "1000", "ramp_inflight"))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while not (await harness.ok("GET", "/state"))["transfers"]:  # controls are never delayed
        assert loop.time() < deadline
        await asyncio.sleep(0.05)
    assert not first.done()  # booked, but its answer is still held
    status, body = await harness.buy(customer_id, destination, "1000", "ramp_inflight")
    assert (status, body["error"]["type"]) == (409, "conflict")
    status, created = await first
    assert status == 201
    assert body["error"]["transfer"]["id"] == created["transfer"]["id"]


async def test_business_profile_may_register_with_fewer_details(harness: Harness) -> None:
    status, body = await harness.api(
        "POST", "/customers", {"reference": "0xBUSINESS", "type": "business"}
    )
    assert status == 201, body
    assert body["customer"]["reference"] == "0xbusiness"
    status, body = await harness.api(
        "POST", "/customers", {"reference": "0xperson", "type": "individual", "firstName": "A"}
    )
    assert (status, body["error"]["type"]) == (400, "invalid")
    assert "lastName" in body["error"]["message"]
    status, body = await harness.api(
        "POST", "/customers", {"reference": "0xbusiness", "type": "business"}
    )
    assert (status, body["error"]["type"]) == (409, "conflict")
