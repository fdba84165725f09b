"""Firm quotes too large for any one maker settled as a bundle (spec 1-rfq-v2 "All or
nothing"): three makers showing shallow levels, a size (exact input) or a buyAmount (exact
output) that needs all three, one quote whose ``transactions.swap`` executes every order in one
batch transaction to the reactor, and the exact on-chain movements of the taker, each maker and
the fee recipient. Takers are fresh wallets funded from a demo wallet on chain 97; each test uses
its own key and restores the simulated makers, pass or fail.
"""

from __future__ import annotations

import pytest

from conformance.calls.control import FAST, Fleet
from conformance.calls.rfq_calls import execute_quote, preview, request_quote, rfq_body, wait_status
from conformance.checks.assertions import (
    assert_filled_record,
    assert_firm_quote,
    assert_settled,
    iso_seconds,
)
from conformance.deployment.funding import Balances, fund_wallet
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import wait_for
from conformance.wire.client import Client
from rfqkit.wallets import Wallet


@pytest.mark.sim_only(because="makers")
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
    http: Client, trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet
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

    before = Balances.read(node, [usdc.address, usdt.address], [taker.address])
    tx_hash = execute_quote(chain, taker, data)  # one transaction for every order
    record = wait_status(trader, data["rfqId"], None, "filled")
    assert_filled_record(record, checked, tx_hash=tx_hash)
    after = before.again()
    assert_settled(
        before, after, chain, checked, taker=taker.address, sell="USDC", buy="USDT", tx_hash=tx_hash
    )
    receipt = node.wait_receipt(tx_hash)
    assert receipt["to"].lower() == chain.reactor.lower(), receipt


@pytest.mark.sim_only(because="makers")
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
    trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet
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
    before = Balances.read(node, [usdc.address, usdt.address], [taker.address])
    tx_hash = execute_quote(chain, taker, data)
    record = wait_status(trader, data["rfqId"], None, "filled")
    assert_filled_record(record, checked, tx_hash=tx_hash)
    assert record["buyAmount"] == str(want), record
    after = before.again()
    assert_settled(
        before, after, chain, checked, taker=taker.address, sell="USDC", buy="USDT", tx_hash=tx_hash
    )
