"""Firm quotes settled by contracts rather than a taker's own key: a smart-account taker proves
control with ERC-1271, the swap from its owner's EOA reverts, and the owner settles through the
account in one batch (approval and swap); an aggregator's router, quoted as the taker with the
``rfq:aggregator`` scope (proof of funds skipped, refused without it), fills inside the user's
own transaction and keeps nothing (the router is the test's own, deployed on the test chain: an
aggregator brings its own, so any deployment can be tested with a given key:aggregator). Each
checks the exact on-chain movements; the fill is indexed from chain with no report.
"""

from __future__ import annotations

import pytest

from conformance.calls.control import Fleet, Liquidity
from conformance.calls.rfq_calls import (
    deploy_sample_router,
    expect_quoted,
    keyless_client,
    request_quote,
    rfq_body,
    router_swap_calldata,
    smart_account_proof,
    wait_status,
)
from conformance.checks.assertions import (
    assert_filled_record,
    assert_firm_quote,
    assert_settled,
    iso_seconds,
)
from conformance.deployment.funding import (
    Balances,
    create_smart_account,
    fund_wallet,
    smart_account_batch,
)
from conformance.deployment.key_source import KeySource
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import TxFailed, hex_bytes, token_delta
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_error
from rfqkit.wallets import Wallet

CHAIN = 97


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
    target: Target, sim: SimControl, http: Client, chain: VenueChain, source: Wallet, fleet: Fleet
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

    before = Balances.read(node, [usdt.address, ngns.address], [account])
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
    assert_settled(
        before,
        before.again(),
        chain,
        checked,
        taker=account,
        sell="USDT",
        buy="NGNS",
        tx_hash=str(receipt["transactionHash"]),
    )


@pytest.mark.needs("key:aggregator", "taker_wallet", "rpc")
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
    target: Target,
    clock: ServiceClock,
    trader: Client,
    chain: VenueChain,
    source: Wallet,
    liquidity: Liquidity,
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    node = chain.rpc()
    router = deploy_sample_router(chain, source)  # the aggregator's own contract
    size = usdt.units(10)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=size, taker=router)

    # Without rfq:aggregator the router is an ordinary taker: it holds nothing.
    error = assert_error(
        trader.post("/v2/rfq/request", json=body), 400, "invalid_request", "insufficient_funds"
    )
    assert error["details"]["available"] == "0", error

    keys = KeySource(target, "aggregator")
    try:
        key = keys.make("test", ("trades:write", "trades:read", "rfq:aggregator"))
        aggregator = trader.with_headers({"Authorization": f"Bearer {key['key']}"})
        data = expect_quoted(request_quote(aggregator, body))  # proof of funds skipped
        checked = assert_firm_quote(
            chain, data, sell="USDT", buy="NGNS", taker=router, sell_amount=size
        )
        quote = data["quote"]

        user = fund_wallet(chain, source, {usdt.address: usdt.units(20)})
        holders = [user.address, router]
        before = Balances.read(node, [usdt.address, ngns.address], holders)
        node.approve(user, usdt.address, router, checked.taker_pays)
        assert clock.now_ms() / 1000 < iso_seconds(quote["expiresAt"]), "quote lapsed"
        calls = router_swap_calldata(data, usdt.address, ngns.address)
        receipt = node.transact(user, router, calls)
        # No /submit: the fill is indexed from chain.
        record = wait_status(aggregator, data["rfqId"], None, "filled")
    finally:
        keys.close()
    assert_filled_record(record, checked, tx_hash=str(receipt["transactionHash"]))
    assert record["submittedAt"] is None, record
    after = before.again()
    assert before.delta(after, usdt.address, user.address) == -checked.taker_pays
    assert before.delta(after, ngns.address, user.address) == checked.buy_amount
    assert before.delta(after, usdt.address, router) == 0, "the router keeps nothing"
    assert before.delta(after, ngns.address, router) == 0, "the router keeps nothing"
    fee = token_delta(receipt, usdt.address, chain.fee_recipient)  # shared: from the logs
    assert fee == checked.fee_amount
    for order in checked.orders:  # the venue's makers, shared: from the fill's own logs
        assert token_delta(receipt, usdt.address, order.maker) == order.outputAmount
        assert token_delta(receipt, ngns.address, order.maker) == -order.inputAmount
    assert node.allowance(usdt.address, router, chain.reactor) == 0
