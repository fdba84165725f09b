"""Waiting for transaction receipts: one poller per chain for every waiter of the process.

Each round is one JSON-RPC batch: the head's block number and the receipt of every transaction
still awaited, however many callers wait. Anvil mines on arrival, so a round right after a send
usually finds the receipt; while nothing comes the rounds back off (5 ms doubling to 100 ms).
A wait for 44 funding transactions is a few batches, not 44 pollers every 10 ms (4,400 requests
a second at a node that is also mining, on a busy machine).

The deadline measures lack of progress, not time since the first poll: the wait fails once
neither an awaited receipt arrived nor the head moved for `stall_s`, and the error says what the
node knows of each missing transaction (its sender and nonce, pending or unknown, the sender's
next nonce on chain), so "no receipt" names its cause.

New blocks are progress for the transactions the node holds, not for one it dropped: that one
would be awaited for ever while others are mined. So after a round in which the head moved, the
next round also asks the node for each transaction still without a receipt
(`eth_getTransactionByHash`), and one the node does not know in `UNKNOWN_ROUNDS` such rounds fails
alone, at once. A transaction the node knows (pending or mined) is always reported by it, so
only a dropped or never accepted one is counted, and a few blocks are enough to tell.

Anvil's automine can miss a transaction that is ready (foundry-rs/foundry#10122: it stays in the
pool with the sender's next nonce until some later transaction makes the node mine again). The
last of a burst, the deployment's funding on a busy machine, then waits for a transaction that
never comes. So once nothing was mined for `NUDGE_S` while an awaited transaction is pending with
its sender's next nonce, the node is asked to mine (`evm_mine`, once per stall; a node without
it answers an error, which is ignored) and a warning names the transaction. A block mined on that
request is not progress: a node that mines it empty, the transaction still pending, has the wait
fail at its deadline with what the node reports, never spin on one empty block after another.

A node that mined that block empty holds the transaction in its pool without taking it as ready:
in its queued part, waiting for the marker of the sender's previous nonce, which will never come.
How it gets there, as Anvil 1.7.1's source reads (not caught in the act): the node reads the
sender's nonce for an arriving transaction and adds it to its pool in two steps; a block mined
between them (a burst of sends from one sender, on a busy machine) mines the previous nonce and
retires its marker before the transaction that needed it arrives. There
it stays, its nonce the sender's next: no block takes it, `anvil_dropTransaction` looks only in
the ready part (it answers null), and the same bytes sent again are "already imported" (seen on
a real node: tests/integration/test_receipts_anvil.py puts a transaction in that state). So once
another `NUDGE_S` passes with nothing mined, a sender whose stuck transaction's signed bytes we
hold (`Sent.raw`) has its transactions taken out of the node's pool, both parts
(`anvil_removePoolTransactions`), and its awaited ones sent again as they were, one by one in
nonce order: the first has no marker to wait for and the automine takes it, under the same hash
the callers wait for (once per stall, with a warning naming what the node answered to each call).
Without its bytes, or on a node that refuses the calls, the stall's deadline and its error apply
as before. From then on, every `NUDGE_S` without progress, the node is asked to mine again
(without a warning; each such block is no progress either)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rfqkit.chain_errors import ChainUnavailable

FIRST_DELAY_S = 0.005  # the next round after progress: Anvil has usually mined by then
MAX_DELAY_S = 0.1  # the slowest round while nothing moves
STALL_S = 30.0  # no receipt and no new block for this long: the wait fails
UNKNOWN_ROUNDS = 3  # blocks mined while the node did not know the transaction: it is dropped
UNKNOWN = "the node does not know the transaction (dropped, or never accepted)"
NUDGE_S = 2.0  # nothing mined this long while an awaited transaction is ready: ask to mine

log = logging.getLogger("rfqkit.receipts")


class ReceiptMissing(ChainUnavailable):
    """An awaited receipt did not come while the node made no progress; the message says what the
    node reports of the transaction."""


@dataclass(frozen=True)
class Sent:
    """What the sender knows of a transaction it broadcast (for the error, should it not land)."""

    sender: str
    nonce: int
    raw: str | None = None  # the signed transaction as sent (0x hex), to send it again


class BatchingNode(Protocol):
    chain_id: int

    async def batch_outcomes(self, calls: list[tuple[str, list[Any]]]) -> list[Any]: ...


class ReceiptWaiter:
    def __init__(
        self,
        node: BatchingNode,
        *,
        stall_s: float = STALL_S,
        now: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._node = node
        self.stall_s = stall_s
        self._now = now  # the loop's monotonic time unless a test gives its own
        self._sleep = sleep
        self._waiting: dict[str, list[asyncio.Future[dict[str, Any]]]] = {}  # by tx hash
        self._sent: dict[str, Sent] = {}  # what the senders told us of the awaited ones
        self._poller: asyncio.Task[None] | None = None  # runs while anyone waits

    def _time(self) -> float:
        return self._now() if self._now is not None else asyncio.get_running_loop().time()

    async def receipt(self, tx_hash: str, sent: Sent | None = None) -> dict[str, Any]:
        """The receipt of `tx_hash` once mined (reverted ones included: read its status)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tx_hash, []).append(future)
        if sent is not None:
            self._sent[tx_hash] = sent
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll(), name=f"receipts-{self._node.chain_id}")
        try:
            return await future
        finally:
            self._forget(tx_hash, future)

    async def receipts(
        self, tx_hashes: list[str], sent: dict[str, Sent] | None = None
    ) -> list[dict[str, Any]]:
        """Every receipt, in the order of `tx_hashes`."""
        known = sent or {}
        return list(await asyncio.gather(*(self.receipt(h, known.get(h)) for h in tx_hashes)))

    def _forget(self, tx_hash: str, future: asyncio.Future[dict[str, Any]]) -> None:
        futures = self._waiting.get(tx_hash)
        if futures is None:
            return
        if future in futures:
            futures.remove(future)
        if not futures:
            del self._waiting[tx_hash]
            self._sent.pop(tx_hash, None)

    async def close(self) -> None:
        poller, self._poller = self._poller, None
        if poller is not None and not poller.done():
            poller.cancel()
            await asyncio.gather(poller, return_exceptions=True)

    async def _poll(self) -> None:
        head: int | None = None
        progress_at = self._time()
        delay = FIRST_DELAY_S
        failure = "it answered, but the receipt was not there"
        ask: list[str] = []  # without a receipt after a round in which the head moved
        unknown: dict[str, int] = {}  # rounds in a row the node did not know each of those
        nudged = resent = False  # asked the node to mine / sent a transaction again, this stall
        asked_at = 0.0  # when the waiter last sent again or asked to mine after that
        ours = 0  # blocks the node mined on our request (evm_mine), not yet seen on the head
        while self._waiting:
            hashes = list(self._waiting)
            ask = [h for h in ask if h in self._waiting]
            calls: list[tuple[str, list[Any]]] = [
                ("eth_blockNumber", []),
                *(("eth_getTransactionReceipt", [h]) for h in hashes),
                *(("eth_getTransactionByHash", [h]) for h in ask),
            ]
            moved = head_moved = False
            try:
                outcomes = await self._node.batch_outcomes(calls)
            except ChainUnavailable as exc:
                failure = f"the node did not answer: {exc}"
            else:
                number = outcomes[0]
                if isinstance(number, str):
                    height = int(number, 16)
                    head_moved = head is not None and height > head
                    # A block mined on our own request is no progress: the node may mine it
                    # empty, leaving the transaction it was for where it was, for ever.
                    risen = height - head if head is not None and head_moved else 0
                    own = min(ours, risen)
                    ours -= own
                    moved = risen > own
                    head = height
                receipts = outcomes[1 : 1 + len(hashes)]
                for tx_hash, receipt in zip(hashes, receipts, strict=True):
                    if isinstance(receipt, dict):
                        moved = True
                        self._settle(tx_hash, receipt)
                for tx_hash, tx in zip(ask, outcomes[1 + len(hashes) :], strict=True):
                    if tx_hash not in self._waiting or isinstance(tx, dict):
                        unknown.pop(tx_hash, None)  # mined, or the node holds it
                    elif tx is None:
                        unknown[tx_hash] = unknown.get(tx_hash, 0) + 1
                for tx_hash in [h for h, rounds in unknown.items() if rounds >= UNKNOWN_ROUNDS]:
                    del unknown[tx_hash]
                    self._fail(tx_hash, f"{UNKNOWN}, while {UNKNOWN_ROUNDS} blocks were mined")
            ask = list(self._waiting) if head_moved else []
            if moved:
                progress_at = self._time()
                delay = FIRST_DELAY_S
                nudged = resent = False
            elif self._time() - progress_at > self.stall_s:
                await self._fail_all(failure)
                return
            elif not nudged and self._time() - progress_at > NUDGE_S:
                nudged = True
                if await self._nudge(list(self._waiting)):
                    ours += 1
            elif nudged and not resent and self._time() - progress_at > 2 * NUDGE_S:
                resent = True
                asked_at = self._time()
                await self._send_again(list(self._waiting))
            elif resent and self._time() - asked_at > NUDGE_S:
                # Sent again and still not mined: the automine missed it once more, or the node
                # held it back; a block on request takes every ready transaction.
                asked_at = self._time()
                if await self._nudge(list(self._waiting), quiet=True):
                    ours += 1
            if self._waiting:
                await self._sleep(delay)
                delay = min(delay * 2, MAX_DELAY_S)

    async def _ready(self, hashes: list[str]) -> list[tuple[str, str, int]]:
        """(hash, sender, nonce) of each of `hashes` pending with its sender's next nonce."""
        txs = await self._node.batch_outcomes([("eth_getTransactionByHash", [h]) for h in hashes])
        pending = [
            (h, str(tx["from"]), int(str(tx["nonce"]), 16))
            for h, tx in zip(hashes, txs, strict=True)
            if isinstance(tx, dict) and tx.get("blockNumber") is None
        ]
        if not pending:
            return []
        counts = await self._node.batch_outcomes(
            [("eth_getTransactionCount", [sender, "latest"]) for _, sender, _ in pending]
        )
        return [
            (h, sender, nonce)
            for (h, sender, nonce), count in zip(pending, counts, strict=True)
            if isinstance(count, str) and int(count, 16) == nonce
        ]

    async def _send_again(self, hashes: list[str]) -> None:
        """Clear the pool of a sender whose next transaction the node will not mine, then send
        its awaited transactions again from their bytes, in nonce order (the module says why)."""
        try:
            ready = await self._ready(hashes)
            if not ready:
                return
            tx_hash, sender, nonce = ready[0]
            again = sorted(
                (sent.nonce, h, sent.raw)
                for h, sent in self._sent.items()
                if h in self._waiting
                and sent.raw is not None
                and sent.sender.lower() == sender.lower()
            )
            if tx_hash not in {h for _, h, _ in again}:
                return  # without its bytes: the stall's deadline and error apply
            log.warning(
                "chain %s: %s (from %s, nonce %d) is still pending with its sender's next nonce "
                "but not mined after %g s: clearing the sender's transactions from the node's "
                "pool and sending its %d awaited one(s) again",
                self._node.chain_id,
                tx_hash,
                sender,
                nonce,
                2 * NUDGE_S,
                len(again),
            )
            (removed,) = await self._node.batch_outcomes(
                [("anvil_removePoolTransactions", [sender])]
            )
            answers = [
                (await self._node.batch_outcomes([("eth_sendRawTransaction", [raw])]))[0]
                for _, _, raw in again  # one by one: each in the pool before the next
            ]
            log.warning(
                "chain %s: %s: the node answered the removal with %s and the sends with %s",
                self._node.chain_id,
                tx_hash,
                _shown(removed),
                ", ".join(_shown(a) for a in answers),
            )
        except (ChainUnavailable, KeyError, ValueError):
            return  # the stall's own deadline and error still apply

    async def _nudge(self, hashes: list[str], quiet: bool = False) -> bool:
        """Ask the node to mine if one of `hashes` is pending with its sender's next nonce;
        whether it did ask. `quiet`: without the warning (a request after the first)."""
        try:
            ready = await self._ready(hashes)
            if not ready:
                return False
            tx_hash, sender, nonce = ready[0]
            if not quiet:
                log.warning(
                    "chain %s: %s (from %s, nonce %d) is ready but nothing was mined for %g s: "
                    "asking the node to mine (an automine miss, foundry-rs/foundry#10122)",
                    self._node.chain_id,
                    tx_hash,
                    sender,
                    nonce,
                    NUDGE_S,
                )
            await self._node.batch_outcomes([("evm_mine", [])])
            return True
        except (ChainUnavailable, KeyError, ValueError):
            return False  # the stall's own deadline and error still apply

    def _settle(self, tx_hash: str, receipt: dict[str, Any]) -> None:
        for future in self._waiting.pop(tx_hash, []):
            if not future.done():
                future.set_result(receipt)
        self._sent.pop(tx_hash, None)

    def _fail(self, tx_hash: str, why: str) -> None:
        """One transaction the node dropped: its waiters fail now, the others wait on."""
        error = ReceiptMissing(
            f"chain {self._node.chain_id}: no receipt for {tx_hash}"
            f"{_whose(self._sent.pop(tx_hash, None))}: {why}"
        )
        for future in self._waiting.pop(tx_hash, []):
            if not future.done():
                future.set_exception(error)

    async def _fail_all(self, failure: str) -> None:
        waiting, self._waiting = self._waiting, {}
        for tx_hash, futures in waiting.items():
            error = ReceiptMissing(await self._explain(tx_hash, failure))
            for future in futures:
                if not future.done():
                    future.set_exception(error)
        self._sent.clear()

    async def _explain(self, tx_hash: str, failure: str) -> str:
        """One line: which transaction, whose and which nonce, and what the node says of it."""
        sent = self._sent.get(tx_hash)
        lead = f"chain {self._node.chain_id}: no receipt for {tx_hash}"
        quiet = f"nothing mined for {self.stall_s:g} s"
        try:
            (tx,) = await self._node.batch_outcomes([("eth_getTransactionByHash", [tx_hash])])
        except ChainUnavailable as exc:
            tx = exc
        if isinstance(tx, ChainUnavailable):
            return f"{lead}{_whose(sent)}: {quiet}; {failure}; then: {tx}"
        if not isinstance(tx, dict):
            return f"{lead}{_whose(sent)}: {quiet}; {failure}; {UNKNOWN}"
        sender, nonce = str(tx.get("from")), int(str(tx.get("nonce", "0x0")), 16)
        state = "pending in its pool" if tx.get("blockNumber") is None else "mined"
        try:
            (count,) = await self._node.batch_outcomes(
                [("eth_getTransactionCount", [sender, "latest"])]
            )
            mined = int(count, 16) if isinstance(count, str) else -1
        except (ChainUnavailable, ValueError):
            mined = -1
        if mined < 0:
            return f"{lead} (from {sender}, nonce {nonce}): {quiet}; {failure}; {state}"
        if mined < nonce:
            why = f"it waits behind a gap: the sender's next nonce on chain is {mined}"
        elif mined > nonce:
            why = f"the sender's next nonce on chain is already {mined} (nonce {nonce} was used)"
        else:
            why = f"its nonce is the sender's next one ({mined}), yet it was not mined"
        return f"{lead} (from {sender}, nonce {nonce}): {quiet}; {failure}; {state}; {why}"


def _shown(outcome: Any) -> str:
    """A JSON-RPC outcome for a log line: the result, or the error it was."""
    return f"an error ({outcome})" if isinstance(outcome, Exception) else repr(outcome)


def _whose(sent: Sent | None) -> str:
    return f" (from {sent.sender}, nonce {sent.nonce})" if sent is not None else ""
