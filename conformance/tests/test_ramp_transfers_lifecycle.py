"""Ramp transfer lifecycle: quote drift and its acceptance, a stalled payout retried after 20
minutes, a late payment after EXPIRED, lost provider webhooks recovered by the five-minute sweep
and by the 8 s read re-check, failure and refund, cancellation, forward-only statuses (a forged,
correctly signed stale webhook), settled transfers that never change, and the timeline.

Driven by ``/_sim/clock/advance`` and the sandbox's controls (``sim_only``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from conformance.calls.ramp import Ramp, fresh_wallet
from conformance.calls.ramp_transfers import (
    EXPIRE_AFTER_S,
    PAYMENT_WINDOW_S,
    RETRY_AFTER_S,
    SWEEP_S,
    Created,
    Transfers,
    check_transfer,
    receipt_of,
    wait_until,
)
from conformance.deployment.venue import VenueChain
from conformance.wire.response_checks import assert_error, parse_iso_utc
from rfqkit.json_rpc import hex_to_int

pytestmark = pytest.mark.sim_only


def status_is(*statuses: str) -> Any:
    return lambda transfer: transfer["status"] in statuses


def pairs(transfer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["status"], e["providerStatus"]) for e in transfer["timeline"]]


@pytest.mark.spec(
    "ramp/limits/price-drift-bound",
    "ramp/endpoints/post-v2-ramp-transfers/expectedtargetamount",
    "ramp/endpoints/post-v2-ramp-transfers/behaviour-2",
    "ramp/errors/409-quote_drift",
    "ramp/errors/envelope",
    "ramp/errors/code-stable-message-not",
)
@pytest.mark.sim_only(because="provider")
def test_quote_drift_books_nothing_and_the_same_intent_key_accepts(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    shown = transfers.create(transfers.body(wallet, "buy", "20000")).transfer["targetAmount"]
    body = transfers.body(wallet, "buy", "20000", expectedTargetAmount=shown)
    with transfers.rates_shifted(-3):
        drift = transfers.post(body)
        error = assert_error(drift, 409, "quote_drift")
        assert error["expectedTargetAmount"] == shown
        actual = Decimal(error["actualTargetAmount"])
        assert abs(actual - Decimal(shown)) > Decimal(shown) / 100  # beyond the 1 % bound
        assert isinstance(error["rateLabel"], str)
        assert error["rateLabel"]
        assert isinstance(error["feeLabel"], str)
        assert "providerRecipientId" not in error  # a buy registers no recipient
        assert len(transfers.listed(wallet)["transfers"]) == 1  # nothing booked
        accepted = transfers.create(
            {
                **body,
                "expectedTargetAmount": error["actualTargetAmount"],
                "proof": ramp.proof(wallet),
            }
        )
    assert abs(Decimal(accepted.transfer["targetAmount"]) - actual) < actual / 1000
    assert len(transfers.listed(wallet)["transfers"]) == 2


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-transfers/behaviour-2",
    "ramp/endpoints/post-v2-ramp-transfers/payout",
    "ramp/errors/409-quote_drift",
    "ramp/overview/properties-that-must-hold/one-call-post-v2",
)
@pytest.mark.sim_only(because="provider")
def test_sell_quote_drift_carries_the_recipient_for_the_retry(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    shown = transfers.create(transfers.body(wallet, "sell", "800")).transfer["targetAmount"]
    body = transfers.body(wallet, "sell", "800", expectedTargetAmount=shown)
    recipients_before = len(ramp.state()["recipients"])
    with transfers.rates_shifted(5):
        error = assert_error(transfers.post(body), 409, "quote_drift")
        assert set(error) >= {
            "expectedTargetAmount",
            "actualTargetAmount",
            "rateLabel",
            "feeLabel",
            "providerRecipientId",
        }
        recipient = error["providerRecipientId"]
        payout = {**body["payout"], "providerRecipientId": recipient}
        # Accept: the same intentKey, expectedTargetAmount omitted, the recipient copied.
        accepted = transfers.create(
            {
                **{k: v for k, v in body.items() if k != "expectedTargetAmount"},
                "payout": payout,
                "proof": ramp.proof(wallet),
            }
        )
    # The rate walks with the clock; the acceptance books the quote of its own moment.
    assert abs(
        Decimal(accepted.transfer["targetAmount"]) - Decimal(error["actualTargetAmount"])
    ) < (Decimal(shown) / 1000)
    provider_view = transfers.provider_view(accepted.transfer["providerTransferId"])
    assert provider_view["recipientId"] == recipient
    # One recipient for the drifted attempt, reused by its acceptance.
    assert len(ramp.state()["recipients"]) == recipients_before + 1


@pytest.mark.spec(
    "ramp/limits/payout-retry-eligibility",
    "ramp/endpoints/reading/stalled-payouts",
    "ramp/endpoints/post-v2-ramp-transfers-id-retry-payout-check",
    "ramp/endpoints/post-v2-ramp-transfers-id-retry-payout",
    "ramp/resources/transfer/retryofid",
    "ramp/resources/transfer/claim-token",
)
@pytest.mark.sim_only(because="clock")
def test_stalled_payout_is_retried_after_twenty_minutes(
    ramp: Ramp, transfers: Transfers, chain: VenueChain
) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    created = transfers.create(transfers.body(wallet, "buy", "12000"))
    path = f"transfers/{created.id}/retry-payout"
    early = ramp.post(f"{path}/check", transfers.retry_body(wallet))
    assert early.status == 200, early.raw
    assert early.json()["eligible"] is False
    assert early.json()["reason"] == "not_stuck"
    transfers.control(created.id, "stall")
    transfers.pay_in(created.id)
    stuck = transfers.drive(
        created, lambda t: t["providerStatus"] == "funds_converted", what="funds_converted"
    )
    assert stuck["status"] == "SENDING"
    check = ramp.post(f"{path}/check", transfers.retry_body(wallet))
    assert check.status == 200, check.raw
    found = check.json()
    assert set(found) == {
        "eligible",
        "reason",
        "stuckSince",
        "stuckForMs",
        "waitMs",
        "balance",
        "required",
        "covers",
    }
    assert (found["eligible"], found["reason"]) == (False, "too_soon")
    assert found["stuckForMs"] + found["waitMs"] == pytest.approx(RETRY_AFTER_S * 1000, abs=2)
    assert found["required"] == {"amount": created.transfer["targetAmount"], "currency": "NGNS"}
    assert Decimal(found["balance"]["available"]) >= Decimal(created.transfer["targetAmount"])
    assert found["covers"] is True
    assert_error(ramp.post(path, transfers.retry_body(wallet)), 400, "invalid_request", "too_soon")

    ramp.advance(RETRY_AFTER_S)
    ready = ramp.post(f"{path}/check", transfers.retry_body(wallet)).json()
    assert (ready["eligible"], ready["reason"], ready["waitMs"]) == (True, None, 0)
    assert ready["stuckSince"] == found["stuckSince"]
    assert parse_iso_utc(ready["stuckSince"]) <= parse_iso_utc(stuck["timeline"][-1]["at"])
    stranger = fresh_wallet()
    assert_error(ramp.post(f"{path}/check", transfers.retry_body(stranger)), 404, "not_found")

    retried = ramp.post(path, transfers.retry_body(wallet))
    assert retried.status == 201, retried.raw
    answer = retried.json()
    retry = check_transfer(answer["transfer"])
    assert retry["retryOfId"] == created.id
    assert retry["id"] != created.id
    assert answer["claimToken"]
    original = transfers.read(created)
    assert (original["status"], original["providerStatus"]) == ("SENDING", "funds_converted")
    again = ramp.post(f"{path}/check", transfers.retry_body(wallet)).json()
    assert again["reason"] == "retry_in_flight"
    ids = [t["id"] for t in transfers.listed(wallet)["transfers"]]
    assert ids == [retry["id"], created.id]  # the original keeps its row

    retry_created = Created(retry, answer["claimToken"])
    done = transfers.drive(retry_created, status_is("COMPLETED"), what="the retried payout")
    receipt = receipt_of(chain, done["payOut"]["blockchain_hash"])
    assert hex_to_int(receipt["status"]) == 1
    assert done["payOut"]["address"] == wallet.address


@pytest.mark.spec(
    "ramp/limits/payment-window",
    "ramp/states/transfer-status/expired",
    "ramp/states/transfer-status/awaiting_funds-background-expiry",
    "ramp/states/transfer-status/expired-provider-update",
    "ramp/states/transfer-status/rules",
)
@pytest.mark.sim_only(because="clock")
def test_late_payment_after_expired_ends_completed(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    created = transfers.create(transfers.body(wallet, "buy", "7000", email="late@example.com"))
    expires_at = parse_iso_utc(created.transfer["expiresAt"])
    window = (expires_at - parse_iso_utc(created.transfer["createdAt"])).total_seconds()
    assert window == pytest.approx(PAYMENT_WINDOW_S, abs=1)
    ramp.advance(int(window) + EXPIRE_AFTER_S - 30)
    assert transfers.stored(wallet, created.id)["status"] == "AWAITING_FUNDS"  # not yet
    ramp.advance(31)
    expired = wait_until(
        lambda: t if (t := transfers.stored(wallet, created.id))["status"] == "EXPIRED" else None,
        what="EXPIRED 10 minutes after expiresAt",
    )
    expired_at = parse_iso_utc(expired["timeline"][-1]["at"])
    assert (expired_at - expires_at).total_seconds() >= EXPIRE_AFTER_S
    transfers.pay_in(created.id, "late")
    done = transfers.drive(created, status_is("COMPLETED"), what="the late payment to complete")
    assert done["payOut"]["blockchain_hash"]
    statuses = [s for s, _ in pairs(done)]
    assert statuses[0] == "AWAITING_FUNDS"
    assert "EXPIRED" in statuses
    assert statuses[-1] == "COMPLETED"
    assert ("EXPIRED", "funds_received") in pairs(done)  # the late money shows while EXPIRED
    kinds = [(e["kind"], e["status"]) for e in transfers.outbox(created.id)]
    assert ("result", "EXPIRED") in kinds
    assert kinds[-1] == ("result", "COMPLETED")


@pytest.mark.spec(
    "ramp/limits/background-sweep",
    "ramp/events/item-1",
    "ramp/states/transfer-status/awaiting_funds-provider-webhook-or-status-re-check",
    "ramp/overview/properties-that-must-hold/status-pulled-pushed-statuses",
)
@pytest.mark.sim_only(because="provider")
def test_lost_webhooks_are_recovered_by_the_five_minute_sweep(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    with transfers.webhooks("drop"):
        created = transfers.create(transfers.body(wallet, "sell", "600"))
        transfers.pay_in(created.id)
        provider = transfers.provider_view(created.transfer["providerTransferId"])
        assert provider["status"] != "awaiting_funds"
        assert transfers.stored(wallet, created.id)["status"] == "AWAITING_FUNDS"
        ramp.advance(SWEEP_S)
        # Only the list is read from here on: it serves storage and never asks the provider.
        recovered = wait_until(
            lambda: (
                t
                if (t := transfers.stored(wallet, created.id))["status"] != "AWAITING_FUNDS"
                else None
            ),
            what="the sweep to re-check the transfer",
        )
    assert recovered["status"] in ("PROCESSING", "SENDING", "COMPLETED")
    assert recovered["providerStatus"] != "awaiting_funds"


@pytest.mark.spec(
    "ramp/limits/transfer-provider-re-check-throttle",
    "ramp/endpoints/reading/while-not-settled-read",
    "ramp/events/item-1",
)
@pytest.mark.sim_only(because="provider")
def test_lost_webhooks_are_recovered_by_the_8s_read_recheck(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    with transfers.webhooks("drop"):
        created = transfers.create(transfers.body(wallet, "sell", "650"))
        transfers.pay_in(created.id)
        # Fresh stored state is served without asking the provider.
        assert transfers.read(created)["status"] == "AWAITING_FUNDS"
        ramp.advance(9)
        moved = transfers.read(created)
        assert moved["status"] in ("PROCESSING", "SENDING"), moved
        # Within the next 8 s the read does not ask again, even as the provider moves on.
        seen = moved["providerStatus"]
        transfers.control(created.id, "advance", {"to": "completed"})
        assert transfers.read(created)["providerStatus"] == seen
        ramp.advance(9)
        assert transfers.read(created)["status"] == "COMPLETED"


@pytest.mark.spec(
    "ramp/states/transfer-status/failed",
    "ramp/states/transfer-status/refunded",
    "ramp/states/transfer-status/failed-provider-update",
    "ramp/states/transfer-status/origin-states-failed-cancelled",
    "ramp/states/transfer-status/rules",
)
@pytest.mark.sim_only(because="provider")
def test_fail_then_refund(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    created = transfers.create(transfers.body(wallet, "sell", "700", email="r@example.com"))
    transfers.pay_in(created.id)
    transfers.drive(created, status_is("PROCESSING", "SENDING"), what="the funds to arrive")
    transfers.control(created.id, "fail", {"refund": True})
    failed = transfers.drive(created, status_is("FAILED", "REFUNDED"), what="FAILED")
    refunded = transfers.drive(created, status_is("REFUNDED"), what="REFUNDED")
    statuses = [s for s, _ in pairs(refunded)]
    assert statuses[-2:] == ["FAILED", "REFUNDED"] or failed["status"] == "REFUNDED"
    assert "FAILED" in statuses
    kinds = [(e["kind"], e["status"]) for e in transfers.outbox(created.id)]
    assert ("result", "FAILED") in kinds
    assert ("result", "REFUNDED") in kinds


@pytest.mark.spec(
    "ramp/states/transfer-status/cancelled",
    "ramp/states/transfer-status/origin-states-failed-cancelled",
    "ramp/states/transfer-status/rules",
)
@pytest.mark.sim_only(because="provider")
def test_cancel_settles_and_nothing_moves_it_again(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    created = transfers.create(transfers.body(wallet, "sell", "750"))
    transfers.control(created.id, "cancel")
    cancelled = transfers.drive(created, status_is("CANCELLED"), what="CANCELLED")
    assert pairs(cancelled) == [
        ("AWAITING_FUNDS", "awaiting_funds"),
        ("CANCELLED", "cancelled"),
    ]
    # A settled transfer never changes: not by a correctly signed webhook, not by time.
    provider = transfers.provider_view(created.transfer["providerTransferId"])
    late = transfers.send_webhook({**provider, "status": "funds_received"})
    assert late.status == 200, late.raw
    assert late.json()["outcome"] == "ignored"
    ramp.advance(PAYMENT_WINDOW_S + EXPIRE_AFTER_S + 60)
    assert transfers.read(created) == cancelled
    stored = transfers.stored(wallet, created.id)  # the wallet view: account number cut
    assert {k: v for k, v in stored.items() if k != "payOut"} == {
        k: v for k, v in cancelled.items() if k != "payOut"
    }


@pytest.mark.spec(
    "ramp/states/transfer-status/rules",
    "ramp/overview/properties-that-must-hold/status-pulled-pushed-statuses",
    "ramp/events/item-1",
)
@pytest.mark.sim_only(because="provider")
def test_statuses_only_move_forward_under_stale_and_duplicate_webhooks(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    created = transfers.create(transfers.body(wallet, "sell", "900"))
    snapshot = transfers.provider_view(created.transfer["providerTransferId"])  # awaiting_funds
    transfers.pay_in(created.id)
    sending = transfers.drive(
        created, lambda t: t["providerStatus"] == "outgoing_payment_sent", what="payment sent"
    )
    # A stale, correctly signed webhook: the provider's older view of this transfer.
    for stale_status in ("awaiting_funds", "funds_received", "funds_converted"):
        resp = transfers.send_webhook({**snapshot, "status": stale_status})
        assert resp.status == 200, resp.raw
        assert resp.json()["outcome"] == "ignored"
    assert transfers.read(created)["timeline"] == sending["timeline"]
    # The same event twice: the second is a duplicate.
    current = transfers.provider_view(created.transfer["providerTransferId"])
    resp = transfers.send_webhook(current, event_id="evt_conf_dup_" + created.id)
    assert resp.status == 200
    assert (
        transfers.send_webhook(current, event_id="evt_conf_dup_" + created.id).json()["outcome"]
        == "duplicate"
    )
    # A bad signature is refused and changes nothing.
    bad = transfers.send_webhook(
        {**current, "status": "completed"}, secret="whsec_not_the_secret_at_all"
    )
    assert_error(bad, 401, "unauthorized", "invalid_signature")
    done = transfers.drive(created, status_is("COMPLETED"), what="COMPLETED")
    ranks = {"AWAITING_FUNDS": 0, "PROCESSING": 1, "SENDING": 2, "COMPLETED": 3}
    statuses = [ranks[s] for s, _ in pairs(done)]
    assert statuses == sorted(statuses)
    assert len(pairs(done)) == len(set(pairs(done)))  # one entry per change


@pytest.mark.spec(
    "ramp/endpoints/reading/stalled-payouts",
    "ramp/endpoints/post-v2-ramp-transfers-id-retry-payout-check",
    "ramp/endpoints/post-v2-ramp-transfers-id-retry-payout",
)
@pytest.mark.sim_only(because="clock")
def test_a_stalled_sell_is_not_offered_a_payout_retry(ramp: Ramp, transfers: Transfers) -> None:
    # docs/ramp.md RA63: a retry pays the parked stablecoin to a buy's wallet; a sell's stalled
    # leg is a bank payout. The check must not call eligible what the retry then refuses.
    wallet = fresh_wallet()
    ramp.registered(wallet)
    created = transfers.create(transfers.body(wallet, "sell", "300"))
    transfers.control(created.id, "stall")
    transfers.pay_in(created.id)
    stuck = transfers.drive(
        created, lambda t: t["providerStatus"] == "funds_converted", what="funds_converted"
    )
    assert stuck["status"] == "SENDING"
    ramp.advance(RETRY_AFTER_S + 1)
    path = f"transfers/{created.id}/retry-payout"
    check = ramp.post(f"{path}/check", transfers.retry_body(wallet))
    assert check.status == 200, check.raw
    found = check.json()
    assert (found["eligible"], found["reason"]) == (False, "no_destination"), found
    assert found["required"] == {"amount": created.transfer["targetAmount"], "currency": "NGN"}
    assert found["covers"] is False  # a parked NGNS balance never covers an NGN amount
    assert_error(
        ramp.post(path, transfers.retry_body(wallet)), 400, "invalid_request", "no_destination"
    )
    ids = [t["id"] for t in transfers.listed(wallet)["transfers"]]
    assert ids == [created.id]  # nothing was booked


@pytest.mark.spec(
    "ramp/resources/transfer/payout-buy-type-address",
    "ramp/states/transfer-status/sending-provider-update",
)
@pytest.mark.sim_only(because="provider")
def test_the_payout_hash_is_shown_once_completed(ramp: Ramp, transfers: Transfers) -> None:
    # Spec: payOut on a buy gains blockchain_hash "once COMPLETED" (RA65), although the
    # provider knows the hash as soon as it broadcasts the payout.
    wallet = fresh_wallet()
    ramp.verified(wallet)
    with ramp.restoring():
        ramp.configure(stepDelaySeconds=600)  # nothing moves on by itself during the test
        created = transfers.create(transfers.body(wallet, "buy", "5000"))
        transfers.pay_in(created.id)
        transfers.control(created.id, "advance", {"to": "outgoing_payment_sent"})
        sending = wait_until(
            lambda: (
                t
                if (t := transfers.read(created))["providerStatus"] == "outgoing_payment_sent"
                else None
            ),
            timeout=10.0,
            what="outgoing_payment_sent",
        )
        assert sending["status"] == "SENDING"
        assert "blockchain_hash" not in sending["payOut"], sending["payOut"]
        listed = transfers.listed(wallet)["transfers"][0]
        assert "blockchain_hash" not in listed["payOut"], listed["payOut"]
        done = transfers.drive(created, status_is("COMPLETED"), step_s=600, what="COMPLETED")
    assert done["payOut"]["blockchain_hash"].startswith("0x")
