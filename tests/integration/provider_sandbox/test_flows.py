"""Buys and sells end to end against a real sandbox over HTTP and a real Anvil chain."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rfqkit.wallets import demo_wallet, derive_wallet
from tests.integration.provider_sandbox.harness import Harness

pytestmark = pytest.mark.integration


async def test_buy_pays_out_real_ngns_on_chain(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-buy-destination").address
    customer_id = await harness.verified_customer(destination)
    status, body = await harness.buy(customer_id, destination, "100000", "ramp_buy_1")
    assert status == 201, body
    transfer = body["transfer"]
    assert transfer["status"] == "awaiting_funds"
    assert transfer["payIn"]["type"] == "temporary_bank_account"
    assert len(transfer["payIn"]["recipient_details"]["account_number"]) == 10
    assert transfer["payOut"] == {
        "type": "address",
        "network": "bnb-testnet",
        "address": destination,
    }
    target_units = int(Decimal(transfer["targetAmount"]).scaleb(6))
    before = await harness.balance(destination)

    paid = await harness.ok("POST", f"/transfers/{transfer['id']}/pay-in", {"mode": "exact"})
    assert paid["transfer"]["status"] == "funds_received"
    await harness.advance(5)
    assert (await harness.transfer(transfer["id"]))["status"] == "funds_converted"
    await harness.advance(10)  # two more steps at once: payout sent, receipt mined
    done = await harness.transfer(transfer["id"])

    assert done["status"] == "completed"
    assert [e["status"] for e in done["statusHistory"]] == [
        "awaiting_funds",
        "funds_received",
        "funds_converted",
        "outgoing_payment_sent",
        "completed",
    ]
    tx_hash = done["payOut"]["blockchain_hash"]
    receipt = await harness.chain.rpc("eth_getTransactionReceipt", [tx_hash])
    assert int(receipt["status"], 16) == 1
    assert receipt["to"].lower() == harness.token.lower()
    assert await harness.balance(destination) - before == target_units


async def test_sell_deposit_sent_by_a_wallet_is_detected(harness: Harness) -> None:
    wallet = demo_wallet(0)
    transfer = await harness.sell("2500.5", "ramp_sell_1", wallet.address)
    deposit = transfer["payIn"]["address"]
    assert transfer["payIn"]["network"] == "bnb-testnet"
    assert transfer["payOut"]["type"] == "bank_account"
    assert transfer["payOut"]["bankName"] == "Guaranty Trust Bank"

    await harness.send_ngns(wallet.private_key, deposit, Decimal("1000"))
    # Too little arrived: still waiting, and the shortfall shows.
    partial = await harness.transfer(transfer["id"])
    assert partial["status"] == "awaiting_funds"
    assert partial["shortBy"] == "1500.500000"
    await harness.send_ngns(wallet.private_key, deposit, Decimal("1500.5"))
    await harness.wait_for(transfer["id"], "funds_received")

    await harness.advance(15)
    done = await harness.transfer(transfer["id"])
    assert done["status"] == "completed"
    assert await harness.balance(deposit) == int(Decimal("2500.5").scaleb(6))


async def test_sell_pay_in_shortcut_sends_the_deposit_on_chain(harness: Harness) -> None:
    transfer = await harness.sell("300", "ramp_sell_shortcut", demo_wallet(1).address)
    paid = await harness.ok("POST", f"/transfers/{transfer['id']}/pay-in", {"mode": "exact"})
    assert paid["transfer"]["status"] == "funds_received"
    assert await harness.balance(transfer["payIn"]["address"]) == 300 * 10**6


async def test_stalled_buy_parks_the_balance_and_retry_pays_it(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-stall").address
    customer_id = await harness.verified_customer(destination)
    _, body = await harness.buy(customer_id, destination, "50000", "ramp_stall_1")
    transfer_id = body["transfer"]["id"]
    target = body["transfer"]["targetAmount"]
    await harness.ok("POST", f"/transfers/{transfer_id}/stall")
    await harness.ok("POST", f"/transfers/{transfer_id}/pay-in", {"mode": "exact"})
    await harness.advance(60)

    stuck = await harness.transfer(transfer_id)
    assert stuck["status"] == "funds_converted"
    assert "blockchain_hash" not in stuck["payOut"]
    _, balance = await harness.api("GET", f"/customers/{customer_id}/balance")
    assert balance == {"available": target, "currency": "NGNS"}

    status, retried = await harness.api(
        "POST", f"/transfers/{transfer_id}/retry-payout", {"reference": "ramp_retry_1"}
    )
    assert status == 201, retried
    retry = retried["transfer"]
    assert retry["retryOf"] == transfer_id
    assert retry["targetAmount"] == target
    _, balance = await harness.api("GET", f"/customers/{customer_id}/balance")
    assert balance["available"] == "0.000000"
    status, again = await harness.api(
        "POST", f"/transfers/{transfer_id}/retry-payout", {"reference": "ramp_retry_2"}
    )
    assert status == 422, again

    await harness.advance(10)
    done = await harness.transfer(retry["id"])
    assert done["status"] == "completed"
    assert await harness.balance(destination) == int(Decimal(target).scaleb(6))
    assert (await harness.transfer(transfer_id))["status"] == "funds_converted"


async def test_failed_sell_is_refunded_on_chain(harness: Harness) -> None:
    refund_to = derive_wallet("sandbox-test-refund").address
    transfer = await harness.sell("700", "ramp_refund_1", refund_to)
    await harness.ok("POST", f"/transfers/{transfer['id']}/pay-in", {"mode": "exact"})
    failed = await harness.ok("POST", f"/transfers/{transfer['id']}/fail", {"refund": True})
    assert failed["transfer"]["status"] == "failed"
    assert await harness.balance(refund_to) == 0

    await harness.advance(5)
    refunded = await harness.transfer(transfer["id"])
    assert refunded["status"] == "refunded"
    receipt = await harness.chain.rpc(
        "eth_getTransactionReceipt", [refunded["refund"]["blockchain_hash"]]
    )
    assert int(receipt["status"], 16) == 1
    assert await harness.balance(refund_to) == 700 * 10**6
    status, body = await harness.control("POST", f"/transfers/{transfer['id']}/advance")
    assert status == 409, body


async def test_failed_buy_before_payment_is_refunded_without_chain(harness: Harness) -> None:
    destination = derive_wallet("sandbox-test-fail-buy").address
    customer_id = await harness.verified_customer(destination)
    _, body = await harness.buy(customer_id, destination, "1000", "ramp_fail_buy")
    transfer_id = body["transfer"]["id"]
    await harness.ok("POST", f"/transfers/{transfer_id}/fail", {"refund": True})
    await harness.advance(5)
    done = await harness.transfer(transfer_id)
    assert [e["status"] for e in done["statusHistory"]] == [
        "awaiting_funds",
        "failed",
        "refunded",
    ]
    assert done["refund"] == {"type": "bank_account"}
