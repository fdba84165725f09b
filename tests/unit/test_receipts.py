"""rfqkit.receipts.ReceiptWaiter against a fake node: every waiter of a chain shares one batch per
round, the deadline counts time without progress (not time since the first poll), a transaction
the node dropped fails while other blocks are mined, and a missing receipt's error says what the
node knows of the transaction."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from rfqkit.chain_errors import ChainUnavailable
from rfqkit.receipts import NUDGE_S, ReceiptMissing, ReceiptWaiter, Sent

SENDER = "0x" + "11" * 20


class FakeNode:
    """A node whose blocks and receipts the test sets; every batch is recorded. Time is the
    test's: each round's sleep advances it, so a stall is reached without waiting for it."""

    chain_id = 97

    def __init__(self) -> None:
        self.head = 1
        self.receipts: dict[str, dict[str, Any]] = {}
        self.pool: dict[str, dict[str, Any]] = {}  # transactions known but not mined
        self.nonce_on_chain = 0
        self.batches: list[list[tuple[str, list[Any]]]] = []
        self.down = False
        self.now = 0.0
        self.on_round: list[Any] = []  # callables run before each round's answer
        self.mined_on_request = 0  # evm_mine calls
        self.raw_hashes: dict[str, str] = {}  # a signed transaction's bytes -> its hash

    async def batch_outcomes(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        self.batches.append(calls)
        for step in self.on_round:
            step(self)
        if self.down:
            raise ChainUnavailable("chain 97: node at http://127.0.0.1:1 refused the connection")
        outcomes: list[Any] = []
        for method, params in calls:
            if method == "eth_blockNumber":
                outcomes.append(hex(self.head))
            elif method == "eth_getTransactionReceipt":
                outcomes.append(self.receipts.get(params[0]))
            elif method == "eth_getTransactionByHash":
                outcomes.append(self.pool.get(params[0]))
            elif method == "eth_getTransactionCount":
                outcomes.append(hex(self.nonce_on_chain))
            elif method == "anvil_removePoolTransactions":  # both parts of the pool
                for tx_hash, tx in list(self.pool.items()):
                    if tx["from"] == params[0]:
                        del self.pool[tx_hash]
                outcomes.append(None)
            elif method == "eth_sendRawTransaction":  # automine: mined on arrival
                tx_hash = self.raw_hashes[params[0]]
                self.receipts[tx_hash] = mined(tx_hash)
                self.nonce_on_chain += 1
                self.head += 1
                outcomes.append(tx_hash)
            elif method == "evm_mine":  # Anvil's manual mine: every ready transaction
                self.mined_on_request += 1
                for tx_hash, tx in list(self.pool.items()):
                    if int(tx["nonce"], 16) == self.nonce_on_chain:
                        self.receipts[tx_hash] = mined(tx_hash)
                        del self.pool[tx_hash]
                        self.nonce_on_chain += 1
                self.head += 1
                outcomes.append("0x0")
            else:
                raise AssertionError(method)
        return outcomes

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)

    def waiter(self, stall_s: float = 30.0) -> ReceiptWaiter:
        return ReceiptWaiter(self, stall_s=stall_s, now=lambda: self.now, sleep=self.sleep)


def mined(tx_hash: str) -> dict[str, Any]:
    return {"transactionHash": tx_hash, "status": "0x1"}


def ready_with_bytes() -> tuple[FakeNode, str, str]:
    """A node holding one transaction ready with its sender's next nonce (2), whose signed
    bytes the sender kept: (node, its hash, its bytes)."""
    node = FakeNode()
    tx, raw = "0x" + "7a" * 32, "0xf86c0285"
    node.raw_hashes[raw] = tx
    node.pool[tx] = {"from": SENDER, "nonce": hex(2), "blockNumber": None}
    node.nonce_on_chain = 2
    return node, tx, raw


def mines_empty_on_request(node: FakeNode) -> None:
    """The miss: every block mined on request (evm_mine) comes without the transaction."""
    original = node.batch_outcomes

    async def stuck(calls: list[tuple[str, list[Any]]]) -> list[Any]:
        if ("evm_mine", []) in calls:
            node.mined_on_request += 1
            node.head += 1
            return ["0x0" if m == "evm_mine" else None for m, _ in calls]
        return await original(calls)

    node.batch_outcomes = stuck  # type: ignore[method-assign]


async def test_many_waiters_share_one_batch_per_round() -> None:
    node = FakeNode()
    hashes = [f"0x{i:064x}" for i in range(44)]
    node.receipts = {h: mined(h) for h in hashes}
    waiter = node.waiter()
    receipts = await waiter.receipts(hashes)
    assert [r["transactionHash"] for r in receipts] == hashes
    assert len(node.batches) == 1
    assert len(node.batches[0]) == 45  # the head, then every receipt
    assert node.batches[0][0] == ("eth_blockNumber", [])


async def test_rounds_back_off_while_nothing_comes_and_stop_once_all_arrived() -> None:
    node = FakeNode()
    tx = "0x" + "ab" * 32
    node.on_round.append(lambda n: n.receipts.setdefault(tx, mined(tx)) if n.now > 1 else None)
    receipt = await node.waiter().receipt(tx)
    assert receipt["transactionHash"] == tx
    # 5 ms doubling to 100 ms: a second of waiting takes about 14 rounds, not 100 or 1,000.
    assert 10 <= len(node.batches) <= 20
    rounds = len(node.batches)
    await asyncio.sleep(0)
    assert len(node.batches) == rounds  # no poller left once nobody waits


async def test_a_slow_node_that_keeps_mining_is_waited_for_past_the_stall_time() -> None:
    node = FakeNode()
    tx = "0x" + "cd" * 32
    node.pool[tx] = {"from": SENDER, "nonce": hex(0), "blockNumber": None}  # it holds ours

    def mine(n: FakeNode) -> None:
        n.head += 1  # progress: a block every round, though not ours yet
        if n.now > 95:
            n.receipts[tx] = mined(tx)

    node.on_round.append(mine)
    receipt = await node.waiter(stall_s=30).receipt(tx)
    assert receipt["transactionHash"] == tx
    assert node.now > 95  # three stall times after the first poll: still waited for


async def test_a_transaction_behind_a_nonce_gap_fails_naming_sender_nonce_and_gap() -> None:
    node = FakeNode()
    tx = "0x" + "ef" * 32
    node.pool[tx] = {"from": SENDER, "nonce": hex(7), "blockNumber": None}
    node.nonce_on_chain = 5
    with pytest.raises(ReceiptMissing) as failed:
        await node.waiter(stall_s=30).receipt(tx)
    message = str(failed.value)
    assert tx in message
    assert f"from {SENDER}, nonce 7" in message
    assert "pending in its pool" in message
    assert "behind a gap: the sender's next nonce on chain is 5" in message
    assert 30 < node.now < 31  # the stall time, counted from the last progress
    assert node.mined_on_request == 0  # not ready: mining would not help


async def test_a_ready_transaction_the_node_does_not_mine_is_mined_on_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Anvil's automine can miss a ready transaction (foundry-rs/foundry#10122): with nothing
    mined for NUDGE_S while it is pending with its sender's next nonce, the waiter asks the
    node to mine, once, and says which transaction it was."""
    node = FakeNode()
    tx = "0x" + "7e" * 32
    node.pool[tx] = {"from": SENDER, "nonce": hex(3), "blockNumber": None}
    node.nonce_on_chain = 3
    with caplog.at_level(logging.WARNING, logger="rfqkit.receipts"):
        receipt = await node.waiter(stall_s=30).receipt(tx)
    assert receipt["transactionHash"] == tx
    assert node.mined_on_request == 1
    assert NUDGE_S < node.now < NUDGE_S + 0.5  # at the first round past NUDGE_S
    assert f"{tx} (from {SENDER}, nonce 3) is ready" in caplog.text


async def test_an_unknown_transaction_fails_with_what_the_sender_told() -> None:
    node = FakeNode()
    tx = "0x" + "01" * 32
    with pytest.raises(ReceiptMissing) as failed:
        await node.waiter(stall_s=5).receipt(tx, Sent(SENDER, 3))
    assert f"from {SENDER}, nonce 3" in str(failed.value)
    assert "does not know the transaction" in str(failed.value)


async def test_a_transaction_the_node_dropped_fails_while_other_blocks_are_mined() -> None:
    node = FakeNode()
    dropped, held = "0x" + "05" * 32, "0x" + "06" * 32
    node.pool[held] = {"from": SENDER, "nonce": hex(4), "blockNumber": None}

    def mine(n: FakeNode) -> None:
        n.head += 1  # someone else's block every round; `dropped` is never known
        if n.now > 90:
            n.receipts[held] = mined(held)

    node.on_round.append(mine)
    waiter = node.waiter(stall_s=30)
    waiting = asyncio.create_task(waiter.receipt(held))
    with pytest.raises(ReceiptMissing) as failed:
        # Bounded in real time only so that a wait for ever fails here instead of hanging.
        await asyncio.wait_for(waiter.receipt(dropped, Sent(SENDER, 3)), timeout=10)
    message = str(failed.value)
    assert f"no receipt for {dropped} (from {SENDER}, nonce 3)" in message
    assert "does not know the transaction (dropped, or never accepted)" in message
    assert "while 3 blocks were mined" in message
    assert node.now < 1  # a few rounds, not the stall time nor for ever
    asked = [c for batch in node.batches for c in batch if c[0] == "eth_getTransactionByHash"]
    assert asked.count(("eth_getTransactionByHash", [dropped])) == 3
    # The transaction the node holds is still awaited, past the stall time, and served.
    assert (await waiting)["transactionHash"] == held
    assert node.now > 90


async def test_the_node_is_asked_about_a_transaction_only_after_blocks_it_was_not_in() -> None:
    node = FakeNode()
    hashes = [f"0x{i:064x}" for i in range(44)]

    def mine_all(n: FakeNode) -> None:
        if len(n.batches) >= 2:  # the first round finds nothing; the second all of them
            n.head += 1
            n.receipts.update({h: mined(h) for h in hashes})

    node.on_round.append(mine_all)
    receipts = await node.waiter().receipts(hashes)
    assert len(receipts) == 44
    # Mined in the round after the first: never asked about, the batches stay receipts only.
    assert all(c[0] != "eth_getTransactionByHash" for batch in node.batches for c in batch)


async def test_a_node_that_stops_answering_fails_the_wait_with_its_reason() -> None:
    node = FakeNode()
    node.down = True
    tx = "0x" + "02" * 32
    with pytest.raises(ReceiptMissing, match="refused the connection"):
        await node.waiter(stall_s=5).receipt(tx, Sent(SENDER, 0))


async def test_a_cancelled_waiter_is_forgotten_and_the_others_still_served() -> None:
    node = FakeNode()
    gone, kept = "0x" + "03" * 32, "0x" + "04" * 32
    waiter = node.waiter()
    cancelled = asyncio.create_task(waiter.receipt(gone))
    served = asyncio.create_task(waiter.receipt(kept))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    rounds = len(node.batches)
    node.receipts[kept] = mined(kept)
    assert (await served)["transactionHash"] == kept
    assert cancelled.cancelled()
    later = node.batches[rounds:]
    assert later
    assert all(("eth_getTransactionReceipt", [gone]) not in batch for batch in later)


async def test_blocks_mined_empty_on_request_are_no_progress_and_the_wait_fails_in_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seen in a loaded CI run: the node mined each requested block empty, the ready
    transaction still pending; every such block counted as progress, so a start-up waited
    for ever. Blocks the waiter asked for are not progress: the wait fails at its deadline,
    naming the transaction, its sender and nonce."""
    node = FakeNode()
    tx = "0x" + "7a" * 32
    node.pool[tx] = {"from": SENDER, "nonce": hex(2), "blockNumber": None}
    node.nonce_on_chain = 2

    def mine_empty(n: FakeNode) -> None:  # the miss: requested blocks come without it
        for calls in n.batches[-1:]:
            if ("evm_mine", []) in calls:
                n.receipts.pop(tx, None)
                n.pool[tx] = {"from": SENDER, "nonce": hex(2), "blockNumber": None}
                n.nonce_on_chain = 2

    original = node.batch_outcomes

    async def batch(calls: list[tuple[str, list[Any]]]) -> list[Any]:
        answers = await original(calls)
        mine_empty(node)
        return answers

    node.batch_outcomes = batch  # type: ignore[method-assign]
    with (
        caplog.at_level(logging.WARNING, logger="rfqkit.receipts"),
        pytest.raises(ReceiptMissing) as missing,
    ):
        await node.waiter(stall_s=10).receipt(tx, Sent(SENDER, 2))
    # Asked at NUDGE_S (2 s), then every NUDGE_S after the turn to send again at 4 s (nothing
    # to send: no bytes): at 6 and 8 s. None of the empty blocks reset the stall; one warning.
    assert node.mined_on_request == 3
    assert caplog.text.count("asking the node to mine") == 1
    assert node.now < 10 + 1  # at the deadline, not for ever
    assert tx in str(missing.value)
    assert SENDER in str(missing.value)


async def test_a_ready_transaction_still_not_mined_is_sent_again_from_its_bytes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The node mines the requested block empty and keeps the transaction in its pool
    (foundry-rs/foundry#10122). NUDGE_S later, with its signed bytes known, the waiter clears the
    sender's transactions from the pool and sends it again: the node takes it at once, under the
    same hash."""
    node, tx, raw = ready_with_bytes()
    mines_empty_on_request(node)
    with caplog.at_level(logging.WARNING, logger="rfqkit.receipts"):
        receipt = await node.waiter(stall_s=30).receipt(tx, Sent(SENDER, 2, raw))
    assert receipt["transactionHash"] == tx
    assert node.mined_on_request == 1
    assert 2 * NUDGE_S < node.now < 2 * NUDGE_S + 0.5  # at the first round past twice NUDGE_S
    at = node.batches.index([("eth_sendRawTransaction", [raw])])
    assert node.batches[at - 1] == [("anvil_removePoolTransactions", [SENDER])]
    assert f"{tx} (from {SENDER}, nonce 2) is still pending with its sender's next nonce" in (
        caplog.text
    )


async def test_a_transaction_sent_again_and_still_not_mined_is_mined_on_a_later_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seen in a clean-clone CI run (docs/testing.md L41): sent again, the transaction sat in
    the pool as ready with its sender's next nonce and the automine did not take it. The waiter
    goes on asking the node to mine every NUDGE_S, and says what the node answered to the drop
    and to the send."""
    node, tx, raw = ready_with_bytes()
    original = node.batch_outcomes
    requests = 0

    async def missing(calls: list[tuple[str, list[Any]]]) -> list[Any]:
        nonlocal requests
        if ("evm_mine", []) in calls and requests == 0:  # the first block comes without it
            requests += 1
            node.mined_on_request += 1
            node.head += 1
            return ["0x0"]
        if ("eth_sendRawTransaction", [raw]) in calls:  # accepted, but no automine
            node.batches.append(calls)
            node.pool[tx] = {"from": SENDER, "nonce": hex(2), "blockNumber": None}
            return [tx]
        return await original(calls)

    node.batch_outcomes = missing  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="rfqkit.receipts"):
        receipt = await node.waiter(stall_s=30).receipt(tx, Sent(SENDER, 2, raw))
    assert receipt["transactionHash"] == tx
    assert node.mined_on_request == 2  # the first request's block empty, the second's with it
    assert 3 * NUDGE_S < node.now < 3 * NUDGE_S + 0.5  # NUDGE_S after it was sent again
    assert f"{tx}: the node answered the removal with None and the sends with '{tx}'" in (
        caplog.text
    )


async def test_the_senders_awaited_transactions_are_sent_again_in_nonce_order() -> None:
    """A stuck transaction (nonce 2, the sender's next) and one of the same sender queued behind
    it (nonce 3) are cleared from the pool together and sent again from their bytes, the lower
    nonce first; another sender's transaction in the pool is left where it was."""
    node, first, first_raw = ready_with_bytes()
    second, second_raw = "0x" + "7b" * 32, "0xf86c0386"
    node.raw_hashes[second_raw] = second
    node.pool[second] = {"from": SENDER, "nonce": hex(3), "blockNumber": None}
    other = "0x" + "7c" * 32
    node.pool[other] = {"from": "0x" + "22" * 20, "nonce": hex(9), "blockNumber": None}
    mines_empty_on_request(node)
    waiter = node.waiter(stall_s=30)
    receipts = await waiter.receipts(
        [second, first], {first: Sent(SENDER, 2, first_raw), second: Sent(SENDER, 3, second_raw)}
    )
    assert [r["transactionHash"] for r in receipts] == [second, first]
    sends = [b[0][1][0] for b in node.batches if b[0][0] == "eth_sendRawTransaction"]
    assert sends == [first_raw, second_raw]
    assert other in node.pool
