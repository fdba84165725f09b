"""rfqkit.receipts on a real Anvil: a ready transaction the node holds without mining it (what
an automine miss, foundry-rs/foundry#10122, leaves behind at the end of a burst; here automine
is switched off, so the node holds it every time) is mined once the waiter has seen nothing
mined for NUDGE_S, and the wait ends with its receipt instead of failing after the stall time."""

from __future__ import annotations

import time

import pytest
from eth_account import Account

from rfqkit.anvil import start_anvil
from rfqkit.chain import AnvilChain
from rfqkit.receipts import NUDGE_S

pytestmark = pytest.mark.integration

CHAIN_ID = 31337


async def test_a_ready_transaction_the_node_holds_is_mined_on_request() -> None:
    node = start_anvil(CHAIN_ID, port=0)
    chain = AnvilChain(CHAIN_ID, node.rpc_url)
    try:
        sender = Account.create()
        await chain.set_balance(sender.address, 10**18)
        await chain.rpc("evm_setAutomine", [False])
        tx = await chain.send_transaction(sender.key.hex(), to=sender.address, data=b"", gas=21_000)
        held = await chain.rpc("eth_getTransactionByHash", [tx])
        assert held["blockNumber"] is None  # in the pool, its nonce the sender's next
        started = time.monotonic()
        receipt = await chain.receipt(tx)
        assert receipt["status"] == "0x1"
        assert time.monotonic() - started >= NUDGE_S  # mined on request, not before
    finally:
        await chain.close()
        node.stop()
