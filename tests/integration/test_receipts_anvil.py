"""rfqkit.receipts on a real Anvil: a ready transaction the node holds without mining it (what
an automine miss, foundry-rs/foundry#10122, leaves behind at the end of a burst; here automine
is switched off, so the node holds it every time) is mined once the waiter has seen nothing
mined for NUDGE_S, and the wait ends with its receipt instead of failing after the stall time.
And one the node keeps in its queued part with the sender's next nonce (the state a start-up
stall left: no block takes it, a drop does not find it, the same bytes are "already imported")
is cleared from the pool and sent again, and mined."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount

from rfqkit.anvil import start_anvil
from rfqkit.chain import AnvilChain
from rfqkit.receipts import NUDGE_S, Sent

pytestmark = pytest.mark.integration

CHAIN_ID = 31337


@pytest.fixture
async def funded() -> AsyncIterator[tuple[AnvilChain, LocalAccount]]:
    """A fresh node and a sender with coin on it."""
    node = start_anvil(CHAIN_ID, port=0)
    chain = AnvilChain(CHAIN_ID, node.rpc_url)
    try:
        sender = Account.create()
        await chain.set_balance(sender.address, 10**18)
        yield chain, sender
    finally:
        await chain.close()
        node.stop()


async def test_a_ready_transaction_the_node_holds_is_mined_on_request(
    funded: tuple[AnvilChain, LocalAccount],
) -> None:
    chain, sender = funded
    await chain.rpc("evm_setAutomine", [False])
    tx = await chain.send_transaction(sender.key.hex(), to=sender.address, data=b"", gas=21_000)
    held = await chain.rpc("eth_getTransactionByHash", [tx])
    assert held["blockNumber"] is None  # in the pool, its nonce the sender's next
    started = time.monotonic()
    receipt = await chain.receipt(tx)
    assert receipt["status"] == "0x1"
    assert time.monotonic() - started >= NUDGE_S  # mined on request, not before


async def test_a_transaction_stuck_in_the_queued_pool_is_cleared_and_sent_again(
    funded: tuple[AnvilChain, LocalAccount],
) -> None:
    chain, sender = funded
    # Nonce 1 while the sender's next is 0: the pool queues it behind nonce 0's marker. The
    # sender's nonce then becomes 1 without nonce 0 ever reaching the pool, so the marker
    # never comes: the transaction stays queued with its sender's next nonce.
    signed = sender.sign_transaction(
        {
            "chainId": CHAIN_ID,
            "nonce": 1,
            "gas": 21_000,
            "gasPrice": 10**10,
            "to": sender.address,
            "value": 0,
        }
    )
    raw = "0x" + signed.raw_transaction.hex()
    tx = await chain.rpc("eth_sendRawTransaction", [raw])
    await chain.rpc("anvil_setNonce", [sender.address, "0x1"])
    assert await chain.rpc("txpool_status") == {"pending": "0x0", "queued": "0x1"}
    await chain.rpc("evm_mine")
    assert (await chain.rpc("eth_getTransactionByHash", [tx]))["blockNumber"] is None
    started = time.monotonic()
    receipt = await chain.receipt(tx, Sent(sender.address, 1, raw))
    assert receipt["status"] == "0x1"
    assert time.monotonic() - started >= 2 * NUDGE_S  # after asking to mine, in vain
