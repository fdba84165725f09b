"""Ramp transfers end to end: a buy from registration through KYC to COMPLETED with a real
on-chain payout, a sell from bank resolution through the wallet's own on-chain deposit to
COMPLETED, the three views (full, wallet, support), the list, the emails, and creation's
idempotency per intentKey under replays and real parallel requests.

Every test uses fresh wallets. Money moving (pay-ins, payouts), the provider's latency and the
emails are driven or read through the simulator's ``/_sim/ramp`` and the clock (``sim_only``);
the views, the list and replays need only the public API."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pytest

from conformance.calls.ramp import CALL_CAPABILITIES, PERSON, Ramp, RampWallet, fresh_wallet
from conformance.calls.ramp_transfers import (
    ACCOUNT,
    Created,
    Transfers,
    check_transfer,
    funded_ramp_wallet,
    ngns,
    receipt_of,
    wait_until,
)
from conformance.checks.stable_reads import KINDS, REPLAY, a_second_later, assert_stable, row_of
from conformance.deployment.venue import VenueChain, whole
from conformance.wire.chain import token_transfers_to
from conformance.wire.response_checks import assert_error
from rfqkit.json_rpc import hex_to_int
from rfqkit.wallets import Wallet


def completed(transfer: dict[str, Any]) -> bool:
    return bool(transfer["status"] == "COMPLETED")


def quoted_rate(label: str) -> Decimal | None:
    """The rate of a ``1 NGN = 0.95 NGNS`` rate label; None when the label reads otherwise."""
    found = re.fullmatch(r"\s*1 \S+ = ([0-9]+(?:\.[0-9]+)?) \S+\s*", label)
    return Decimal(found.group(1)) if found else None


def _create_buy(ramp: Ramp, transfers: Transfers, wallet: RampWallet) -> Created:
    """A buy of 10,000 NGN for a verified wallet, checked as created: awaiting the pay-in to
    the provider's temporary bank account, paying out to the wallet."""
    created = transfers.create(
        transfers.body(wallet, "buy", "10000", email="buyer@example.com", acceptedTerms=True)
    )
    transfer = created.transfer
    assert transfer["side"] == "buy"
    assert (transfer["fiat"], transfer["token"], transfer["chainId"]) == ("NGN", "NGNS", 97)
    assert transfer["provider"] == ramp.provider
    assert transfer["sandbox"] is False
    assert transfer["sourceAmount"] == "10000.00"
    # The provider's fee is inside targetAmount: at most the source at the provider's quoted
    # rate (which walks with the clock, so it is read from this very quote, never assumed).
    target_amount = Decimal(transfer["targetAmount"])
    assert target_amount > 0, transfer
    rate = quoted_rate(transfer["rateLabel"])
    if rate is not None:
        assert target_amount <= Decimal(transfer["sourceAmount"]) * rate, transfer
    assert (transfer["status"], transfer["providerStatus"]) == ("AWAITING_FUNDS", "awaiting_funds")
    assert transfer["retryOfId"] is None
    assert transfer["hasEmail"] is True
    pay_in = transfer["payIn"]
    assert pay_in["type"] == "temporary_bank_account"
    assert set(pay_in["recipient_details"]) == {"bank_name", "account_number", "account_name"}
    assert pay_in["expires_at"]
    assert transfer["payOut"] == {
        "type": "address",
        "network": "bnb-testnet",
        "address": wallet.address,
    }
    assert "blockchain_hash" not in transfer["payOut"]
    assert transfers.read(created)["id"] == created.id  # the claim token reads the full view
    return created


@pytest.mark.spec(
    "ramp/overview/properties-that-must-hold/one-call-post-v2",
    "ramp/overview/properties-that-must-hold/buy-requires-registered-verified",
    "ramp/overview/conventions",
    "ramp/endpoints/post-v2-ramp-transfers",
    "ramp/endpoints/get-v2-ramp-transfers-id",
    "ramp/endpoints/reading/get-x-ramp-claim-returns-full",
    "ramp/resources/transfer/id",
    "ramp/resources/transfer/providertransferid",
    "ramp/resources/transfer/provider",
    "ramp/resources/transfer/sandbox",
    "ramp/resources/transfer/side",
    "ramp/resources/transfer/fiat-token",
    "ramp/resources/transfer/chainid",
    "ramp/resources/transfer/sourceamount",
    "ramp/resources/transfer/targetamount",
    "ramp/resources/transfer/ratelabel-feelabel",
    "ramp/resources/transfer/status",
    "ramp/resources/transfer/providerstatus",
    "ramp/resources/transfer/retryofid",
    "ramp/resources/transfer/payin",
    "ramp/resources/transfer/payout",
    "ramp/resources/transfer/hasemail",
    "ramp/resources/transfer/timeline",
    "ramp/resources/transfer/expiresat",
    "ramp/resources/transfer/createdat",
    "ramp/resources/transfer/payin-on-a-buy",
    "ramp/resources/transfer/claim-token",
    "ramp/states/transfer-status/awaiting_funds",
    "ramp/states/kyc-state/pending-provider-review-cleared",
    "ramp/states/kyc-state/buy-can-run-only",
    "ramp/endpoints/post-v2-ramp-transfers/provider-side-fiat-token-chainid",
    "ramp/endpoints/post-v2-ramp-transfers/side",
    "ramp/endpoints/post-v2-ramp-transfers/amount",
    "ramp/endpoints/post-v2-ramp-transfers/wallet",
    "ramp/endpoints/post-v2-ramp-transfers/proof",
    "ramp/endpoints/post-v2-ramp-transfers/intentkey",
    "ramp/endpoints/post-v2-ramp-transfers/acceptedterms",
    "ramp/endpoints/post-v2-ramp-transfers/email",
)
@pytest.mark.needs("time<=90s")  # without control the KYC review clears in real time
def test_a_buy_is_created_awaiting_funds_with_its_pay_in_instructions(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    _create_buy(ramp, transfers, wallet)


@pytest.mark.spec(
    "ramp/overview/flows/buy",
    "ramp/overview/properties-that-must-hold/status-pulled-pushed-statuses",
    "ramp/overview/item-1",
    "ramp/overview/item-2",
    "ramp/resources/transfer/payout-buy-type-address",
    "ramp/states/transfer-status/processing",
    "ramp/states/transfer-status/sending",
    "ramp/states/transfer-status/completed",
    "ramp/states/transfer-status/awaiting_funds-provider-webhook-or-status-re-check",
    "ramp/states/transfer-status/processing-provider-update",
    "ramp/states/transfer-status/sending-provider-update",
    "ramp/events/item-1",
)
@pytest.mark.sim_only(because="provider")
def test_buy_from_registration_through_kyc_to_an_onchain_payout(
    ramp: Ramp, transfers: Transfers, chain: VenueChain
) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    created = _create_buy(ramp, transfers, wallet)
    transfers.pay_in(created.id)
    done = transfers.drive(created, completed, what="the buy to complete")
    tx_hash = done["payOut"]["blockchain_hash"]
    assert isinstance(tx_hash, str)
    assert tx_hash.startswith("0x")
    assert len(tx_hash) == 66
    receipt = receipt_of(chain, tx_hash)
    assert hex_to_int(receipt["status"]) == 1
    credited = token_transfers_to(receipt, ngns(chain), wallet.address)
    assert credited == [whole(done["targetAmount"], 6)]
    assert chain.rpc().balance_of(ngns(chain), wallet.address) == whole(done["targetAmount"], 6)
    statuses = [(e["status"], e["providerStatus"]) for e in done["timeline"]]
    assert statuses[0] == ("AWAITING_FUNDS", "awaiting_funds")
    assert statuses[-1] == ("COMPLETED", "completed")
    assert {s for s, _ in statuses} == {"AWAITING_FUNDS", "PROCESSING", "SENDING", "COMPLETED"}
    assert ("SENDING", "funds_converted") in statuses


def _create_sell(transfers: Transfers, wallet: RampWallet) -> tuple[Created, dict[str, Any]]:
    """A sell of 100 NGNS for a registered wallet to the sandbox's bank account, checked as
    created: a deposit address to send the tokens to. Returns it and the payout it names."""
    payout = transfers.payout()
    created = transfers.create(transfers.body(wallet, "sell", "100", payout=payout))
    transfer = created.transfer
    assert transfer["sourceAmount"] == "100.000000"
    assert transfer["payIn"]["type"] == "address"
    assert transfer["payIn"]["network"] == "bnb-testnet"
    assert transfer["payOut"] == {
        "type": "bank_account",
        "bankCode": payout["bankCode"],
        "bankName": transfer["payOut"]["bankName"],
        "accountNumber": ACCOUNT,
        "accountName": payout["accountName"],
    }
    return created, payout


@pytest.mark.spec(
    "ramp/overview/properties-that-must-hold/buy-requires-registered-verified",
    "ramp/resources/transfer/payin-sell-type-address",
    "ramp/resources/transfer/payout-shape-sell-not",
    "ramp/endpoints/post-v2-ramp-transfers/payout",
    "ramp/resources/bank/resolve-result-accountname",
)
def test_a_sell_is_created_with_a_deposit_address_and_the_resolved_account(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)  # a sell needs no identity verification
    _create_sell(transfers, wallet)


@pytest.mark.spec(
    "ramp/overview/flows/sell",
    "ramp/states/transfer-status/completed",
)
@pytest.mark.sim_only(because="provider")
def test_sell_from_bank_resolution_through_an_onchain_deposit(
    ramp: Ramp, transfers: Transfers, chain: VenueChain, source: Wallet
) -> None:
    wallet, signer = funded_ramp_wallet(chain, source, "250")
    ramp.registered(wallet)
    created, _ = _create_sell(transfers, wallet)
    deposit = created.transfer["payIn"]["address"]
    node = chain.rpc()
    receipt = node.transfer(signer, ngns(chain), deposit, whole("100", 6))
    assert hex_to_int(receipt["status"]) == 1
    assert node.balance_of(ngns(chain), deposit) == whole("100", 6)
    received = transfers.drive(
        created, lambda t: t["status"] != "AWAITING_FUNDS", what="the deposit to be seen"
    )
    assert received["status"] in ("PROCESSING", "SENDING", "COMPLETED")
    done = transfers.drive(created, completed, what="the sell to complete")
    assert done["payOut"]["accountNumber"] == ACCOUNT
    assert node.balance_of(ngns(chain), wallet.address) == whole("150", 6)


@pytest.mark.spec(
    "ramp/endpoints/reading/get-x-ramp-claim-returns-full",
    "ramp/endpoints/reading/get-wallet-address-list",
    "ramp/endpoints/post-v2-ramp-transfers-list",
    "ramp/endpoints/post-v2-ramp-support-transfer",
    "ramp/endpoints/list-response-shape-where",
    "ramp/resources/transfer/masked-views",
    "ramp/auth/item-3",
    "ramp/auth/item-5",
    "ramp/errors/404-not_found",
    *KINDS["ramp_transfer"].rules,
)
def test_full_wallet_and_support_views_and_the_list(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    created = [transfers.create(transfers.body(wallet, "sell", str(500 + n))) for n in range(3)]
    first = created[0]
    full = transfers.read(first)
    read_at = time.monotonic()
    assert full["payOut"]["accountNumber"] == ACCOUNT
    account_name = full["payOut"]["accountName"]

    masked_resp = transfers.get(first.id, wallet=wallet.lower)
    assert masked_resp.status == 200, masked_resp.raw
    masked = check_transfer(masked_resp.json()["transfer"])
    assert masked["payOut"]["accountNumber"] == ACCOUNT[-4:]
    assert {k: v for k, v in masked.items() if k != "payOut"} == {
        k: v for k, v in full.items() if k != "payOut"
    }
    assert masked["payOut"]["accountName"] == account_name

    for reference in (first.id, full["providerTransferId"]):
        resp = transfers.support(reference)
        assert resp.status == 200, resp.raw
        support = check_transfer(resp.json()["transfer"])
        assert support["id"] == first.id
        assert support["payOut"]["accountNumber"] == "******" + ACCOUNT[-4:]
        assert support["payOut"]["accountName"] != account_name
        assert support["payOut"]["accountName"].endswith("***")
        for name in ("sourceAmount", "targetAmount", "status", "providerTransferId", "payIn"):
            assert support[name] == full[name], name
        assert "email" not in str(support)

    page = transfers.listed(wallet, first=2)
    assert [t["id"] for t in page["transfers"]] == [created[2].id, created[1].id]
    assert page["nextCursor"]
    rest = transfers.listed(wallet, first=2, after=page["nextCursor"])
    assert [t["id"] for t in rest["transfers"]] == [first.id]
    assert rest["nextCursor"] is None
    for item in page["transfers"] + rest["transfers"]:
        assert item["payOut"]["accountNumber"] == ACCOUNT[-4:]
    # A row of the list is the record read again, and so is the full view a second later.
    (row,) = rest["transfers"]
    assert_stable("ramp_transfer", first.id, full, row, what=row_of())
    later = a_second_later(read_at)
    assert_stable("ramp_transfer", first.id, full, transfers.read(first), what=later)
    assert transfers.listed(fresh_wallet())["transfers"] == []

    # The id alone, a wrong token, someone else's wallet, an unknown id: all 404.
    assert_error(transfers.get(first.id), 404, "not_found")
    assert_error(transfers.get(first.id, claim=created[1].claim_token), 404, "not_found")
    assert_error(transfers.get(first.id, wallet=fresh_wallet().address), 404, "not_found")
    assert_error(
        transfers.get("rtr_000000000000000000000000", claim=first.claim_token), 404, "not_found"
    )
    assert_error(transfers.support("trf_000000000000000000000000"), 404, "not_found")


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-transfers/emails",
    "ramp/events/item-2",
    "ramp/resources/transfer/hasemail",
    "ramp/endpoints/post-v2-ramp-transfers/email",
)
@pytest.mark.sim_only(because="provider")
def test_emails_instructions_funds_received_and_result(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    created = transfers.create(transfers.body(wallet, "buy", "5000"))  # no email: the record's
    assert created.transfer["hasEmail"] is True
    [instructions] = transfers.outbox(created.id)
    assert instructions["kind"] == "instructions"
    assert instructions["to"] == PERSON["email"]
    assert f"/ramp/transfers/{created.id}#claim={created.claim_token}" in instructions["body"]
    details = created.transfer["payIn"]["recipient_details"]
    assert details["account_number"] in instructions["body"]
    transfers.pay_in(created.id)
    transfers.drive(created, completed, what="the buy to complete")
    kinds = wait_until(
        lambda: (
            k
            if len(k := [(e["kind"], e["status"]) for e in transfers.outbox(created.id)]) >= 3
            else None
        ),
        what="three emails",
    )
    assert kinds[0] == ("instructions", "AWAITING_FUNDS")
    assert kinds[1][0] == "funds_received"
    assert kinds[2:] == [("result", "COMPLETED")]

    # No email on the transfer nor on the record: none is sent, the claim token leads back.
    quiet = fresh_wallet()
    ramp.register(quiet, firstName="Quiet")
    sell = transfers.create(transfers.body(quiet, "sell", "200"))
    assert sell.transfer["hasEmail"] is False
    assert transfers.outbox(sell.id) == []
    assert transfers.read(sell)["id"] == sell.id


@pytest.mark.spec(
    "ramp/overview/properties-that-must-hold/creation-idempotent-per-intentkey",
    "ramp/endpoints/post-v2-ramp-transfers/idempotent-per-intentkey",
    *KINDS["ramp_transfer"].rules,
)
def test_replay_with_the_same_intent_key_returns_the_same_transfer(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell", "300")
    first = transfers.create(body)
    again = transfers.create({**body, "proof": ramp.proof(wallet)})  # the lost response's retry
    assert again.id == first.id
    # The existing transfer, made once: the first answer's, field for field.
    assert_stable("ramp_transfer", first.id, first.transfer, again.transfer, what=REPLAY)
    assert again.claim_token != first.claim_token
    for token in (first.claim_token, again.claim_token):
        assert transfers.read(Created(first.transfer, token))["id"] == first.id
    if ramp.sim is not None:  # the provider's own books: through the sandbox's controls only
        same = [t for t in ramp.state()["transfers"] if t["reference"] == first.id]
        assert len(same) == 1
    assert len(transfers.listed(wallet)["transfers"]) == 1
    other = transfers.post({**body, "amount": "301", "proof": ramp.proof(wallet)})
    assert_error(other, 400, "invalid_request", "intent_key_reused")


@pytest.mark.spec(
    "ramp/overview/properties-that-must-hold/creation-idempotent-per-intentkey",
    "ramp/endpoints/post-v2-ramp-transfers/idempotent-per-intentkey",
    "ramp/errors/502-upstream_error",
)
@pytest.mark.sim_only(because="provider")
def test_parallel_duplicate_creates_make_exactly_one_transfer(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell", "400")
    with ramp.restoring():
        ramp.configure(apiLatencyMs=300)  # every provider call takes a while: creates overlap
        barrier = threading.Barrier(8)

        def send(_: int) -> tuple[int, dict[str, Any]]:
            barrier.wait()
            resp = transfers.post(body)
            return resp.status, resp.json()

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(send, range(8)))
    created = [a for s, a in answers if s == 201]
    in_flight = [a for s, a in answers if s == 502]
    assert len(created) + len(in_flight) == 8, answers
    assert created, answers
    assert {a["transfer"]["id"] for a in created} == {created[0]["transfer"]["id"]}
    for answer in in_flight:
        assert answer["error"]["code"] == "upstream_error"
        assert answer["error"]["details"]["reason"] == "intent_in_flight"
    transfer_id = created[0]["transfer"]["id"]
    assert [t["id"] for t in transfers.listed(wallet)["transfers"]] == [transfer_id]
    assert len([t for t in ramp.state()["transfers"] if t["reference"] == transfer_id]) == 1
    replay = transfers.create({**body, "proof": ramp.proof(wallet)})
    assert replay.id == transfer_id


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-transfers/idempotent-per-intentkey",
    "ramp/errors/502-upstream_error",
)
@pytest.mark.sim_only(because="faults")
def test_a_create_in_flight_answers_502_then_completes(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell", "450")
    with ramp.restoring():
        ramp.configure(apiLatencyMs=1500)  # capabilities, recipient, quote, transfer: ~6 s
        before = ramp.calls(CALL_CAPABILITIES)
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(transfers.post, body)
            # The intentKey is taken before the provider's switches are read (RA50): once the
            # sandbox has counted that read, the first create is in flight.
            wait_until(
                lambda: True if ramp.calls(CALL_CAPABILITIES) > before else None,
                what="the first create to reach the provider",
            )
            duplicate = transfers.post({**body, "proof": ramp.proof(wallet)})
            result = first.result()
    assert result.status == 201, result.raw
    assert duplicate.status == 502, (duplicate.status, duplicate.raw)
    assert_error(duplicate, 502, "upstream_error", "intent_in_flight")
    again = transfers.create({**body, "proof": ramp.proof(wallet)})
    assert again.id == result.json()["transfer"]["id"]
