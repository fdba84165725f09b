"""Firm quotes from one maker settled on chain the way an integrator does it (spec 1-rfq-v2
"Execution rules for the caller"): a keyless exact-input request with a proof of control, the
quote checked field by field, takerPays approved to the reactor, ``transactions.swap`` broadcast
with the taker's own key, the hash reported and ``GET /v2/rfq/{id}`` polled until filled (its
record free of secrets), then an exact-output request that delivers exactly the buyAmount
without any report. Each checks the exact on-chain movements of the taker, the maker and the fee
recipient. Takers are fresh wallets funded from a demo wallet, on chain 97 (test) in small sizes;
each test uses its own key (or its own client IP), so outstanding slots never collide.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.calls.control import Liquidity
from conformance.calls.rfq_calls import (
    approve_for_quote,
    broadcast_swap,
    eoa_proof,
    keyless_client,
    random_tx_hash,
    request_quote,
    rfq_body,
    submit,
    wait_status,
)
from conformance.checks.assertions import (
    RECORD_FIELDS,
    assert_filled_record,
    assert_firm_quote,
    assert_settled,
    iso_seconds,
)
from conformance.deployment.funding import Balances, fund_wallet
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import TxFailed, hex_bytes
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error, parse_iso_utc
from rfqkit.wallets import Wallet

CHAIN = 97
SECRETS = ("claimToken", "encodedOrder", "signature", "orders")


def _no_secrets(record: dict[str, Any], raw: bytes, data: dict[str, Any]) -> None:
    assert set(record) >= RECORD_FIELDS, sorted(set(record) ^ RECORD_FIELDS)
    assert not set(SECRETS) & set(record), record
    text = raw.decode()
    assert data["claimToken"] not in text, "GET returned the claim token"
    assert data["quote"]["signature"][2:] not in text.lower(), "GET returned a signature"
    assert data["quote"]["encodedOrder"][2:] not in text.lower(), "GET returned the order"


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/overview/item-1",
    "rfq/overview/properties-that-must-hold/quote-bound-one-taker",
    "rfq/overview/properties-that-must-hold/no-credential-is-required",
    "rfq/overview/call-sequence/post-v2-rfq-request",
    "rfq/overview/call-sequence/caller-signs-broadcasts-transactions-swap",
    "rfq/overview/call-sequence/post-v2-rfq-id-submit",
    "rfq/overview/call-sequence/get-v2-rfq-id",
    "rfq/overview/conventions/amounts-base-10-strings-atomic",
    "rfq/overview/conventions/addresses-evm-addresses-lowercase",
    "rfq/overview/conventions/rates-rateray-ray-scaled-1e27",
    "rfq/overview/conventions/timestamps-iso-8601-utc-except",
    "rfq/overview/conventions/successful-bodies-wrapped-object",
    "rfq/overview/timing-defaults/quote-ttl",
    "rfq/limits/quote-ttl",
    "rfq/resources/rfq-record/status",
    "rfq/resources/rfq-record/sellamount-buyamount-feeamount",
    "rfq/resources/rfq-record/txhash",
    "rfq/resources/rfq-record/submittedat-filledat",
    "rfq/resources/rfq-record/expiresat",
    "rfq/resources/rfq-record/replyby",
    "rfq/resources/rfq-record/quotettlms",
    "rfq/resources/rfq-record/routing",
    "rfq/resources/rfq-record/signed-order-signature-claim",
    "rfq/resources/firm-quote/rfqid",
    "rfq/resources/firm-quote/claimtoken",
    "rfq/resources/firm-quote/status",
    "rfq/resources/firm-quote/quote",
    "rfq/resources/firm-quote/transactions",
    "rfq/resources/firm-quote/routing",
    "rfq/resources/firm-quote/quote-fields/sellamount",
    "rfq/resources/firm-quote/quote-fields/buyamount",
    "rfq/resources/firm-quote/quote-fields/feeamount",
    "rfq/resources/firm-quote/quote-fields/takerpays",
    "rfq/resources/firm-quote/quote-fields/rateray",
    "rfq/resources/firm-quote/quote-fields/expiresat",
    "rfq/resources/firm-quote/quote-fields/orderdeadline",
    "rfq/resources/firm-quote/quote-fields/latestorderdeadline",
    "rfq/resources/firm-quote/quote-fields/reactor",
    "rfq/resources/firm-quote/quote-fields/spender",
    "rfq/resources/firm-quote/quote-fields/taker",
    "rfq/resources/firm-quote/quote-fields/encodedorder-signature",
    "rfq/resources/firm-quote/quote-fields/orders",
    "rfq/resources/firm-quote/unsigned-transaction-shape",
    "rfq/resources/firm-quote/transactions-approval-approves-takerpays-sell",
    "rfq/resources/firm-quote/transactions-swap-only-transaction-broadcast",
    "rfq/resources/firm-quote/routing-object",
    "rfq/states/soliciting-maker-replies-within-reply-budget-to-quoted",
    "rfq/states/quoted-post-v2-rfq-id-submit",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "rfq/states/rule-4",
    "rfq/endpoints/post-v2-rfq-request",
    "rfq/endpoints/post-v2-rfq-id-submit",
    "rfq/endpoints/get-v2-rfq-id",
    "rfq/endpoints/request-body/sellamount",
    "rfq/endpoints/request-body/taker",
    "rfq/endpoints/request-body/takerproof",
    "rfq/endpoints/cancel-submit-status/submit-body",
    "rfq/endpoints/execution-rules-for-the-caller/item-1",
    "rfq/endpoints/execution-rules-for-the-caller/item-2",
    "rfq/endpoints/execution-rules-for-the-caller/item-3",
    "rfq/endpoints/execution-rules-for-the-caller/item-4",
    "rfq/auth/claim-token/returned-once-post-v2",
    "rfq/errors/409-conflict",
)
def test_exact_input_single_maker_settles_keyless(
    target: Target,
    clock: ServiceClock,
    http: Client,
    chain: VenueChain,
    source: Wallet,
    liquidity: Liquidity,
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    node = chain.rpc()
    # The smallest sizes the corridor allows: a QA team's wallet pays for what is traded away.
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(chain.min_size * 20)})
    caller = keyless_client(target, http)  # no key: the wallet proof is enough
    size = usdt.units(chain.min_size * 10)
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=size,
        taker=taker.address.lower(),  # lowercase is accepted and normalized
        proof=eoa_proof(clock, taker, CHAIN),
    )
    body["sellToken"], body["buyToken"] = usdt.address.lower(), ngns.address.lower()
    data = request_quote(caller, body)
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=size
    )
    assert len(checked.orders) == 1, "a small size is one maker's order"
    if liquidity.makers is not None:
        assert checked.orders[0].maker in liquidity.makers, checked.orders[0]
    routing = data["routing"]
    assert routing["preferenceApplied"] is False, routing
    assert routing["restrictionApplied"] is False, routing
    assert routing["fallbackUsed"] is False, routing
    assert routing["targetMakerWallets"] == [], routing
    assert routing["preferredQuotesReceived"] == 0, routing
    assert routing["openMarketQuotesReceived"] >= 1, routing
    rfq_id, token = data["rfqId"], data["claimToken"]
    quote = data["quote"]

    # The record, by claim token: quoted, the quote's expiry, never the secrets.
    resp = caller.get(f"/v2/rfq/{rfq_id}", headers={"X-Rfq-Claim": token})
    record = assert_data(resp)
    _no_secrets(record, resp.raw, data)
    assert record["status"] == "quoted", record
    assert record["taker"] == taker.address, record
    assert (record["sellToken"], record["buyToken"]) == (usdt.address, ngns.address), record
    assert record["expiresAt"] == quote["expiresAt"], (record, quote)
    assert record["quoteTtlMs"] == 60_000, record
    assert record["routing"] == routing, record
    # A winner exists: the amounts are the winner's (debit including fee, delivery, fee).
    assert record["sellAmount"] == quote["takerPays"], (record, quote)
    assert record["buyAmount"] == quote["buyAmount"], (record, quote)
    assert record["feeAmount"] == quote["feeAmount"], (record, quote)
    created = iso_seconds(record["createdAt"])
    reply_by = iso_seconds(record["replyBy"])
    assert created <= reply_by <= created + 0.75 + 0.01, record
    # The quote TTL (60 s) caps the accept cutoff.
    assert iso_seconds(quote["expiresAt"]) <= created + 60.0 + 0.001, (record, quote)

    # Bound to the taker: the same swap from any other wallet reverts.
    swap = data["transactions"]["swap"]
    with pytest.raises(TxFailed):
        node.send(source, swap["to"], hex_bytes(swap["data"]))

    approve_for_quote(chain, taker, data)
    before = Balances.read(node, [usdt.address, ngns.address], [taker.address])
    # Execution rule 4: still before expiresAt by the service clock.
    assert clock.now_ms() / 1000 < iso_seconds(quote["expiresAt"]), "quote lapsed before broadcast"
    signed = node.sign(taker, swap["to"], hex_bytes(swap["data"]))

    # Report the hash first (optional): quoted -> submitted.
    reported = assert_data(submit(caller, rfq_id, token, signed.tx_hash))
    assert reported["status"] == "submitted", reported
    assert reported["txHash"] == signed.tx_hash, reported
    parse_iso_utc(reported["submittedAt"])
    assert reported["filledAt"] is None, reported

    node.broadcast(signed)
    receipt = node.wait_receipt(signed.tx_hash)
    assert int(receipt["status"], 16) == 1, receipt
    record = wait_status(caller, rfq_id, token, "filled")
    assert_filled_record(record, checked, tx_hash=signed.tx_hash)
    assert record["submittedAt"] == reported["submittedAt"], record
    after = before.again()
    assert_settled(
        before,
        after,
        chain,
        checked,
        taker=taker.address,
        sell="USDT",
        buy="NGNS",
        tx_hash=signed.tx_hash,
    )
    assert node.allowance(usdt.address, taker.address, chain.reactor) == 0

    # The same hash again after the fill: 200 with the current status; another hash: 409.
    again = assert_data(submit(caller, rfq_id, token, signed.tx_hash))
    assert again["status"] == "filled", again
    assert_error(submit(caller, rfq_id, token, random_tx_hash()), 409, "conflict")


@pytest.mark.needs("taker_wallet", "key:trades")
@pytest.mark.spec(
    "rfq/overview/properties-that-must-hold/exact-output-is-native",
    "rfq/endpoints/request-body/buyamount",
    "rfq/endpoints/request-body/proof-of-funds",
    "rfq/resources/firm-quote/quote-fields/takerpays",
    "rfq/resources/firm-quote/quote-fields/buyamount",
    "rfq/resources/rfq-record/sellamount-buyamount-feeamount",
    "rfq/endpoints/execution-rules-for-the-caller/item-1",
    "rfq/endpoints/execution-rules-for-the-caller/item-2",
    "rfq/endpoints/execution-rules-for-the-caller/item-3",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "rfq/states/reporting-is-optional",
    "rfq/overview/call-sequence/post-v2-rfq-id-submit",
    "rfq/auth/api-keys/scopes",
)
def test_exact_output_delivers_buy_amount_exactly(
    trader: Client, chain: VenueChain, source: Wallet, liquidity: Liquidity
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    node = chain.rpc()
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(chain.min_size * 100)})
    # A standing nonzero allowance: USDT refuses nonzero -> nonzero approvals.
    node.approve(taker, usdt.address, chain.reactor, 1)
    want = ngns.units(200)  # about 0.125 USDT: a small size, as a QA team's wallet pays it
    data = request_quote(
        trader, rfq_body(chain, "USDT", "NGNS", buy_amount=want, taker=taker.address)
    )
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, buy_amount=want
    )
    assert checked.buy_amount == want
    approval = data["transactions"]["approval"]
    if usdt.usdt_like:  # known from the target's info
        with pytest.raises(TxFailed):  # the approval as is cannot replace the standing one
            node.send(taker, approval["to"], hex_bytes(approval["data"]))
    approve_for_quote(chain, taker, data)  # resets to 0 first, then approves takerPays
    assert node.allowance(usdt.address, taker.address, chain.reactor) == checked.taker_pays

    before = Balances.read(node, [usdt.address, ngns.address], [taker.address])
    tx_hash = broadcast_swap(chain, taker, data)
    # Never reported: the fill is reconciled from chain anyway.
    record = wait_status(trader, data["rfqId"], None, "filled")
    assert_filled_record(record, checked, tx_hash=tx_hash)
    assert record["submittedAt"] is None, record
    assert record["buyAmount"] == str(want), "exact output: exactly the requested buyAmount"
    after = before.again()
    assert_settled(
        before, after, chain, checked, taker=taker.address, sell="USDT", buy="NGNS", tx_hash=tx_hash
    )
    assert node.allowance(usdt.address, taker.address, chain.reactor) == 0, "takerPays was all"
