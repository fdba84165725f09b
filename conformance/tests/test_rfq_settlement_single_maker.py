"""Firm quotes settled on chain the way an integrator does it (spec 1-rfq-v2 "Execution rules for
the caller"): request, approve takerPays to the reactor, broadcast transactions.swap with the
taker's own key, optionally report the hash, poll GET /v2/rfq/{id} until filled. Every test
checks the exact on-chain movements: the taker, each maker and the fee recipient.

Takers are fresh wallets funded from a demo wallet; quotes are on chain 97 (test), in small
sizes. Each test uses its own key (or its own client IP), so outstanding slots never collide.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.assertions import (
    RECORD_FIELDS,
    assert_filled_record,
    assert_firm_quote,
    assert_settled,
    iso_seconds,
)
from conformance.chain import TxFailed, Wallet, hex_bytes, wait_for
from conformance.client import Client
from conformance.control import FAST, Fleet
from conformance.funding import Balances, create_smart_account, fund_wallet, smart_account_batch
from conformance.response_checks import assert_data, assert_error, parse_iso_utc
from conformance.rfq_calls import (
    approve_for_quote,
    broadcast_swap,
    eoa_proof,
    execute_quote,
    expect_quoted,
    keyed_client,
    keyless_client,
    new_key,
    preview,
    random_tx_hash,
    request_quote,
    rfq_body,
    router_swap_calldata,
    smart_account_proof,
    submit,
    wait_status,
)
from conformance.sim_control import SimControl
from conformance.target import Target
from conformance.venue import ChainInfo, Venue

CHAIN = 97
SECRETS = ("claimToken", "encodedOrder", "signature", "orders")


@pytest.fixture
def source(venue: Venue) -> Wallet:
    """The demo wallet that funds this module's takers."""
    return venue.demo_wallets[-1]


@pytest.fixture
def trader(sim: SimControl, http: Client) -> Client:
    """A client with a key of its own (trades:write, trades:read) on the test environment."""
    return keyed_client(http, new_key(sim, "test"))


def _holders(chain: ChainInfo, taker: str, data: dict[str, Any]) -> list[str]:
    makers = [o["maker"] for o in data["quote"]["orders"]]
    return [taker, chain.fee_recipient, *makers]


def _no_secrets(record: dict[str, Any], raw: bytes, data: dict[str, Any]) -> None:
    assert set(record) == RECORD_FIELDS, sorted(set(record) ^ RECORD_FIELDS)
    assert not set(SECRETS) & set(record), record
    text = raw.decode()
    assert data["claimToken"] not in text, "GET returned the claim token"
    assert data["quote"]["signature"][2:] not in text.lower(), "GET returned a signature"
    assert data["quote"]["encodedOrder"][2:] not in text.lower(), "GET returned the order"


@pytest.mark.sim_only
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
    sim: SimControl,
    http: Client,
    chain: ChainInfo,
    source: Wallet,
    fleet: Fleet,
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    node = chain.rpc()
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(20)})
    caller = keyless_client(target, http)  # no key: the wallet proof is enough
    size = usdt.units(10)
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=size,
        taker=taker.address.lower(),  # lowercase is accepted and normalized
        proof=eoa_proof(sim, taker, CHAIN),
    )
    body["sellToken"], body["buyToken"] = usdt.address.lower(), ngns.address.lower()
    data = request_quote(caller, body)
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=size
    )
    assert len(checked.orders) == 1, "a small size is one maker's order"
    assert checked.orders[0].maker in fleet.wallets.values(), checked.orders[0]
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
    before = Balances.read(node, [usdt.address, ngns.address], _holders(chain, taker.address, data))
    # Execution rule 4: still before expiresAt by the service clock.
    assert sim.now_ms() / 1000 < iso_seconds(quote["expiresAt"]), "quote lapsed before broadcast"
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
    assert_settled(before, after, chain, checked, taker=taker.address, sell="USDT", buy="NGNS")
    assert node.allowance(usdt.address, taker.address, chain.reactor) == 0

    # The same hash again after the fill: 200 with the current status; another hash: 409.
    again = assert_data(submit(caller, rfq_id, token, signed.tx_hash))
    assert again["status"] == "filled", again
    assert_error(submit(caller, rfq_id, token, random_tx_hash()), 409, "conflict")


@pytest.mark.sim_only
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
    sim: SimControl, trader: Client, chain: ChainInfo, source: Wallet, fleet: Fleet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    node = chain.rpc()
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(30)})
    # A standing nonzero allowance: USDT refuses nonzero -> nonzero approvals.
    node.approve(taker, usdt.address, chain.reactor, 1)
    want = ngns.units(20_000)  # about 12.5 USDT
    data = request_quote(
        trader, rfq_body(chain, "USDT", "NGNS", buy_amount=want, taker=taker.address)
    )
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, buy_amount=want
    )
    assert checked.buy_amount == want
    approval = data["transactions"]["approval"]
    with pytest.raises(TxFailed):  # the approval as is cannot replace the standing allowance
        node.send(taker, approval["to"], hex_bytes(approval["data"]))
    approve_for_quote(chain, taker, data)  # resets to 0 first, then approves takerPays
    assert node.allowance(usdt.address, taker.address, chain.reactor) == checked.taker_pays

    before = Balances.read(node, [usdt.address, ngns.address], _holders(chain, taker.address, data))
    tx_hash = broadcast_swap(chain, taker, data)
    # Never reported: the fill is reconciled from chain anyway.
    record = wait_status(trader, data["rfqId"], None, "filled")
    assert_filled_record(record, checked, tx_hash=tx_hash)
    assert record["submittedAt"] is None, record
    assert record["buyAmount"] == str(want), "exact output: exactly the requested buyAmount"
    after = before.again()
    assert_settled(before, after, chain, checked, taker=taker.address, sell="USDT", buy="NGNS")
    assert node.allowance(usdt.address, taker.address, chain.reactor) == 0, "takerPays was all"


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/overview/properties-that-must-hold/all-or-nothing",
    "rfq/overview/item-1",
    "rfq/resources/firm-quote/quote-fields/orders",
    "rfq/resources/firm-quote/quote-fields/encodedorder-signature",
    "rfq/resources/firm-quote/quote-fields/orderdeadline",
    "rfq/resources/firm-quote/quote-fields/latestorderdeadline",
    "rfq/resources/firm-quote/quote-fields/expiresat",
    "rfq/resources/firm-quote/quote-fields/takerpays",
    "rfq/resources/firm-quote/quote-fields/feeamount",
    "rfq/resources/firm-quote/transactions-swap-only-transaction-broadcast",
    "rfq/endpoints/execution-rules-for-the-caller/item-3",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "rfq/resources/rfq-record/sellamount-buyamount-feeamount",
)
def test_bundle_of_three_makers_settles_in_one_transaction(
    http: Client, trader: Client, chain: ChainInfo, source: Wallet, fleet: Fleet
) -> None:
    usdc, usdt = chain.token("USDC"), chain.token("USDT")
    node = chain.rpc()
    shallow = {**FAST, "max_inventory_fraction": 0.001}  # about 1,000 USDT shown each
    fleet.only({"alpha": shallow, "bravo": shallow, "charlie": shallow})
    bundled = ("alpha", "bravo", "charlie")

    def depth(name: str) -> int:
        body = rfq_body(
            chain,
            "USDC",
            "USDT",
            sell_amount=usdc.units(1),
            restrictedLiquidityWallets=[fleet.wallet(name)],
        )
        return int(preview(trader, body).get("availableSellAmount") or 0)

    def shallow_depths() -> dict[str, int] | None:
        depths = {name: depth(name) for name in bundled}
        small = all(0 < d < usdc.units(1_200) for d in depths.values())
        return depths if small else None

    depths = wait_for(shallow_depths, interval=0.3, what="the makers' shallower levels")
    ordered = sorted(depths.values())
    size = sum(ordered) * 85 // 100
    assert size > ordered[-1] + ordered[-2], f"{size} must need all three makers: {depths}"

    taker = fund_wallet(chain, source, {usdc.address: size})
    data = request_quote(
        trader, rfq_body(chain, "USDC", "USDT", sell_amount=size, taker=taker.address)
    )
    checked = assert_firm_quote(
        chain, data, sell="USDC", buy="USDT", taker=taker.address, sell_amount=size
    )
    makers = {fleet.name_of(m) for m in checked.makers}
    assert makers == set(bundled), f"expected a bundle of {bundled}, got {makers}"
    assert len(checked.orders) >= 3, checked.orders
    quote = data["quote"]
    assert iso_seconds(quote["expiresAt"]) <= min(o.deadline for o in checked.orders)

    before = Balances.read(node, [usdc.address, usdt.address], _holders(chain, taker.address, data))
    tx_hash = execute_quote(chain, taker, data)  # one transaction for every order
    record = wait_status(trader, data["rfqId"], None, "filled")
    assert_filled_record(record, checked, tx_hash=tx_hash)
    after = before.again()
    assert_settled(before, after, chain, checked, taker=taker.address, sell="USDC", buy="USDT")
    receipt = node.wait_receipt(tx_hash)
    assert receipt["to"].lower() == chain.reactor.lower(), receipt


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/overview/properties-that-must-hold/all-or-nothing",
    "rfq/overview/properties-that-must-hold/exact-output-is-native",
    "rfq/endpoints/request-body/buyamount",
    "rfq/resources/firm-quote/quote-fields/orders",
    "rfq/resources/firm-quote/quote-fields/takerpays",
    "rfq/resources/firm-quote/transactions-swap-only-transaction-broadcast",
    "rfq/resources/rfq-record/sellamount-buyamount-feeamount",
)
def test_exact_output_bundle_delivers_buy_amount_exactly(
    trader: Client, chain: ChainInfo, source: Wallet, fleet: Fleet
) -> None:
    usdc, usdt = chain.token("USDC"), chain.token("USDT")
    node = chain.rpc()
    shallow = {**FAST, "max_inventory_fraction": 0.001}
    bundled = ("alpha", "bravo", "charlie")
    fleet.only(dict.fromkeys(bundled, shallow))

    def buy_depth(name: str) -> int:
        body = rfq_body(
            chain,
            "USDC",
            "USDT",
            buy_amount=usdt.units(1_000_000),
            restrictedLiquidityWallets=[fleet.wallet(name)],
        )
        return int(preview(trader, body).get("availableBuyAmount") or 0)

    def shallow_depths() -> dict[str, int] | None:
        depths = {name: buy_depth(name) for name in bundled}
        return depths if all(0 < d < usdt.units(1_200) for d in depths.values()) else None

    depths = wait_for(shallow_depths, interval=0.3, what="the makers' shallower levels")
    ordered = sorted(depths.values())
    want = sum(ordered) * 85 // 100
    assert want > ordered[-1] + ordered[-2], f"{want} must need all three makers: {depths}"

    taker = fund_wallet(chain, source, {usdc.address: want // 10**12 * 102 // 100})
    data = request_quote(
        trader, rfq_body(chain, "USDC", "USDT", buy_amount=want, taker=taker.address)
    )
    checked = assert_firm_quote(
        chain, data, sell="USDC", buy="USDT", taker=taker.address, buy_amount=want
    )
    assert {fleet.name_of(m) for m in checked.makers} == set(bundled), checked.makers
    before = Balances.read(node, [usdc.address, usdt.address], _holders(chain, taker.address, data))
    tx_hash = execute_quote(chain, taker, data)
    record = wait_status(trader, data["rfqId"], None, "filled")
    assert_filled_record(record, checked, tx_hash=tx_hash)
    assert record["buyAmount"] == str(want), record
    after = before.again()
    assert_settled(before, after, chain, checked, taker=taker.address, sell="USDC", buy="USDT")


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-3",
    "rfq/auth/proof-of-control/typed-data-domain",
    "rfq/auth/proof-of-control/primary-type-takercontrol-fields",
    "rfq/auth/proof-of-control/message",
    "rfq/auth/proof-of-control/sent-takerproof-nonce-issuedat",
    "rfq/overview/properties-that-must-hold/quote-bound-one-taker",
    "rfq/overview/properties-that-must-hold/no-credential-is-required",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "rfq/endpoints/execution-rules-for-the-caller/item-2",
    "rfq/endpoints/execution-rules-for-the-caller/item-3",
)
def test_smart_account_taker_settles_through_its_wallet(
    target: Target, sim: SimControl, http: Client, chain: ChainInfo, source: Wallet, fleet: Fleet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    node = chain.rpc()
    owner = fund_wallet(chain, source, {})  # native coin only: it pays the gas
    account = create_smart_account(chain, owner)
    node.transfer(source, usdt.address, account, usdt.units(20))
    caller = keyless_client(target, http)
    size = usdt.units(10)
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=size,
        taker=account,
        proof=smart_account_proof(sim, owner, account, CHAIN),  # verified by ERC-1271
    )
    data = request_quote(caller, body)
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=account, sell_amount=size
    )

    # The owner's own EOA is not the taker: the swap from it reverts.
    swap = data["transactions"]["swap"]
    with pytest.raises(TxFailed):
        node.send(owner, swap["to"], hex_bytes(swap["data"]))

    before = Balances.read(node, [usdt.address, ngns.address], _holders(chain, account, data))
    approval = data["transactions"]["approval"]
    batch = smart_account_batch(
        [
            (approval["to"], 0, hex_bytes(approval["data"])),
            (swap["to"], 0, hex_bytes(swap["data"])),
        ]
    )
    receipt = node.transact(owner, account, batch)  # msg.sender at the reactor: the account
    record = wait_status(caller, data["rfqId"], data["claimToken"], "filled")
    assert_filled_record(record, checked, tx_hash=str(receipt["transactionHash"]))
    assert record["taker"] == account, record
    assert_settled(before, before.again(), chain, checked, taker=account, sell="USDT", buy="NGNS")


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/overview/item-4",
    "rfq/auth/api-keys/scopes",
    "rfq/endpoints/request-body/proof-of-funds",
    "rfq/resources/firm-quote/quote-fields/spender",
    "rfq/resources/firm-quote/quote-fields/taker",
    "rfq/states/reporting-is-optional",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "rfq/errors/400-invalid_request",
)
def test_aggregator_router_fills_inside_the_users_transaction(
    sim: SimControl, http: Client, chain: ChainInfo, source: Wallet, fleet: Fleet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    node = chain.rpc()
    router = chain.router
    size = usdt.units(10)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=size, taker=router)

    # Without rfq:aggregator the router is an ordinary taker: it holds nothing.
    plain = keyed_client(http, new_key(sim, "test"))
    error = assert_error(
        plain.post("/v2/rfq/request", json=body), 400, "invalid_request", "insufficient_funds"
    )
    assert error["details"]["available"] == "0", error

    aggregator = keyed_client(
        http, new_key(sim, "test", ("trades:write", "trades:read", "rfq:aggregator"))
    )
    data = expect_quoted(request_quote(aggregator, body))  # proof of funds skipped
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=router, sell_amount=size
    )
    quote = data["quote"]

    user = fund_wallet(chain, source, {usdt.address: usdt.units(20)})
    before = Balances.read(
        node, [usdt.address, ngns.address], [*_holders(chain, user.address, data), router]
    )
    node.approve(user, usdt.address, router, checked.taker_pays)
    assert sim.now_ms() / 1000 < iso_seconds(quote["expiresAt"])
    receipt = node.transact(user, router, router_swap_calldata(data, usdt.address, ngns.address))
    # No /submit: the fill is indexed from chain.
    record = wait_status(aggregator, data["rfqId"], None, "filled")
    assert_filled_record(record, checked, tx_hash=str(receipt["transactionHash"]))
    assert record["submittedAt"] is None, record
    after = before.again()
    assert before.delta(after, usdt.address, user.address) == -checked.taker_pays
    assert before.delta(after, ngns.address, user.address) == checked.buy_amount
    assert before.delta(after, usdt.address, router) == 0, "the router keeps nothing"
    assert before.delta(after, ngns.address, router) == 0, "the router keeps nothing"
    assert before.delta(after, usdt.address, chain.fee_recipient) == checked.fee_amount
    for order in checked.orders:
        assert before.delta(after, usdt.address, order.maker) == order.outputAmount
        assert before.delta(after, ngns.address, order.maker) == -order.inputAmount
    assert node.allowance(usdt.address, router, chain.reactor) == 0
