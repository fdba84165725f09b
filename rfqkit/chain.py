"""Access to one EVM chain (an Anvil node) over JSON-RPC (requests and answers: rfqkit/json_rpc.py,
which also has the synchronous face for scripts).

A lean client over kept-alive connections (rfqkit/http_json.py), with JSON-RPC batches: measured
here, web3's async provider cost 0.68 ms per eth_call (it opened a new connection for most calls)
against 0.22 ms for a plain keep-alive aiohttp POST and 0.33 ms for a batch of three; the
transport of rfqkit/http_json.py takes about half of aiohttp's CPU per round trip. Transactions
are signed locally with our deterministic keys (never with unlocked node accounts), so the same
code works against an Anvil we started and one we attached to."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any, cast

from eth_account import Account

from rfqkit import json_rpc
from rfqkit.chain_errors import ChainUnavailable
from rfqkit.http_json import JsonPoster, NodeClosed, NodeRefused
from rfqkit.receipts import ReceiptWaiter, Sent

__all__ = ["AnvilChain", "CallReverted", "ChainUnavailable", "call_params"]

SENT_KEPT = 1024  # sends remembered for a receipt wait (deployment sends about 60 at once)
GAS_PRICE_WEI = 10**10  # 10 gwei: above Anvil's base fee, and nobody else competes for blocks


class CallReverted(RuntimeError):
    """An eth_call ran and reverted: a definite answer from the chain, not an outage."""


class AnvilChain:
    def __init__(
        self,
        chain_id: int,
        rpc_url: str,
        *,
        is_unreachable: Callable[[], bool] = lambda: False,
        timeout_s: float = 10.0,
    ) -> None:
        self.chain_id = chain_id
        self._is_unreachable = is_unreachable  # a fault switch (/_sim/faults) can cut this chain
        self.rpc_url = rpc_url
        self._timeout_s = timeout_s
        self._poster: JsonPoster | None = None  # made on first use, in the loop
        self._ids = 0  # JSON-RPC request ids
        self._nonces: dict[str, int] = {}  # next nonce per local sender, after the first lookup
        self._nonce_lock = asyncio.Lock()  # guards _nonces across the await of the lookup and send
        self._receipts = ReceiptWaiter(self)  # one poller for every receipt awaited here
        self._sent: dict[str, Sent] = {}  # sender and nonce of recent sends, for receipt errors

    async def close(self) -> None:
        await self._receipts.close()
        # Detached before the await: a call made meanwhile opens new connections instead of
        # waiting for ones that are closing.
        poster, self._poster = self._poster, None
        if poster is not None:
            await poster.close()

    async def reset(self) -> None:
        """Forget everything learnt from the node (the local nonces, pooled connections): a new
        node now answers at the same URL (a restarted chain)."""
        async with self._nonce_lock:
            self._nonces.clear()
            await self.close()

    def _failure(self, what: str, exc: BaseException) -> ChainUnavailable:
        """A readable reason (never an exception's repr: it carries connection internals)."""
        if isinstance(exc, NodeRefused):
            reason = "refused the connection (the node is not running)"
        elif isinstance(exc, TimeoutError):
            reason = f"did not answer within {self._timeout_s:g} s"
        elif isinstance(exc, NodeClosed):
            reason = "closed the connection"
        elif isinstance(exc, ValueError):
            reason = "answered something that is not JSON"
        else:
            reason = f"failed ({type(exc).__name__})"
        return ChainUnavailable(f"chain {self.chain_id}: node at {self.rpc_url} {reason} ({what})")

    async def _post(self, payload: Any, what: str, *, faultable: bool = True) -> Any:
        if faultable and self._is_unreachable():
            raise ChainUnavailable(f"chain {self.chain_id} RPC unreachable (fault switch)")
        if self._poster is None:
            self._poster = JsonPoster(self.rpc_url, timeout_s=self._timeout_s)
        try:
            return await self._poster.post(payload)
        except (NodeRefused, NodeClosed, TimeoutError, ValueError) as exc:
            raise self._failure(what, exc) from exc

    def _result(self, method: str, response: Any) -> Any:
        try:
            return json_rpc.result(method, response)
        except json_rpc.RpcError as failed:
            if not failed.reachable:
                raise ChainUnavailable(
                    f"chain {self.chain_id} RPC {method}: malformed answer"
                ) from None
            if method == "eth_call" and "revert" in failed.message.lower():
                raise CallReverted(
                    f"chain {self.chain_id} eth_call reverted: {failed.error}"
                ) from None
            raise ChainUnavailable(f"chain {self.chain_id} RPC {method}: {failed.error}") from None

    def _request(self, method: str, params: list[Any]) -> dict[str, Any]:
        self._ids += 1
        return json_rpc.request(method, params, self._ids)

    async def rpc(self, method: str, params: list[Any] | None = None) -> Any:
        response = await self._post(self._request(method, params or []), method)
        return self._result(method, response)

    async def control_rpc(self, method: str, params: list[Any] | None = None) -> Any:
        """As `rpc`, past the fault switch: the simulator handling its own node (reset,
        snapshots, the state directory), not the service reading the chain."""
        response = await self._post(self._request(method, params or []), method, faultable=False)
        return self._result(method, response)

    async def batch(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        """Several calls in one HTTP round trip; results in call order. Any error raises."""
        outcomes = await self.batch_outcomes(calls)
        for outcome in outcomes:
            if isinstance(outcome, ChainUnavailable | CallReverted):
                raise outcome
        return outcomes

    async def batch_outcomes(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        """Several calls in one HTTP round trip; each call's result, or the ChainUnavailable /
        CallReverted of that call alone (for batches that gather unrelated callers' calls). A
        failure of the round trip itself raises for all."""
        requests = [self._request(method, params) for method, params in calls]
        responses = await self._post(requests, "batch")
        if not isinstance(responses, list) or len(responses) != len(requests):
            raise ChainUnavailable(f"chain {self.chain_id} RPC batch: malformed answer")
        by_id = {r.get("id"): r for r in responses if isinstance(r, dict)}
        outcomes: list[Any] = []
        for call in requests:
            try:
                outcomes.append(self._result(call["method"], by_id.get(call["id"])))
            except (ChainUnavailable, CallReverted) as exc:
                outcomes.append(exc)
        return outcomes

    async def remote_chain_id(self) -> int:
        return int(await self.rpc("eth_chainId"), 16)

    async def latest_timestamp(self) -> int:
        block = await self.rpc("eth_getBlockByNumber", ["latest", False])
        return int(block["timestamp"], 16)

    async def keep_up_with(self, clock_offset_s: float) -> int:
        """Move this node's block time forward so that no block it mines from now on is
        stamped earlier than the whole second a clock running `clock_offset_s` ahead of wall
        time (the service clock) showed at any earlier instant. Returns the seconds it moved.

        Anvil stamps a block with its own wall second plus a whole-second offset, and sets that
        offset whenever its time is set (start-up, `evm_setTime`, `evm_revert`, a loaded state)
        against the wall second it reads at that moment. Its start-up takes the genesis second
        first and fixes the offset a little later: one that straddles a second boundary (a
        node starting on a busy machine) lags wall time by a second for good, and a revert
        puts its time back to the snapshot's block. `evm_increaseTime(0)` reads the offset
        without moving it; raising it to the clock's offset, rounded up, makes the node never
        lag. Never moved back: a block may not be stamped before its parent."""
        reported = await self.control_rpc("evm_increaseTime", [0])
        node_offset = int(str(reported), 0)  # Anvil answers a JSON number (Hardhat a string)
        behind = math.ceil(clock_offset_s) - node_offset
        if behind <= 0:
            return 0
        await self.control_rpc("evm_increaseTime", [behind])
        return behind

    async def increase_time(self, seconds: float) -> None:
        """Move block time forward and mine a block so `latest` shows it at once."""
        await self.rpc("evm_increaseTime", [round(seconds)])
        await self.rpc("evm_mine", [])

    async def set_balance(self, address: str, wei: int) -> None:
        await self.rpc("anvil_setBalance", [address, hex(wei)])

    async def get_code(self, address: str) -> bytes:
        return bytes.fromhex(cast(str, await self.rpc("eth_getCode", [address, "latest"]))[2:])

    async def nonce(self, address: str) -> int:
        return int(await self.rpc("eth_getTransactionCount", [address, "pending"]), 16)

    async def send_transaction(
        self, private_key: str, *, to: str | None, data: bytes, gas: int, value: int = 0
    ) -> str:
        """Sign and broadcast; returns the transaction hash without waiting for the receipt."""
        sender = Account.from_key(private_key)
        async with self._nonce_lock:
            nonce = self._nonces.get(sender.address)
            if nonce is None:
                nonce = await self.nonce(sender.address)
            tx: dict[str, Any] = {
                "chainId": self.chain_id,
                "nonce": nonce,
                "gas": gas,
                "gasPrice": GAS_PRICE_WEI,
                "value": value,
                "data": data,
            }
            if to is not None:
                tx["to"] = to
            raw = "0x" + sender.sign_transaction(tx).raw_transaction.hex()
            tx_hash = await self.rpc("eth_sendRawTransaction", [raw])
            self._nonces[sender.address] = nonce + 1
        if len(self._sent) >= SENT_KEPT:  # sends nobody awaited: forget the oldest
            del self._sent[next(iter(self._sent))]
        self._sent[tx_hash] = Sent(sender.address, nonce, raw)
        return cast(str, tx_hash)

    async def receipt(self, tx_hash: str, sent: Sent | None = None) -> dict[str, Any]:
        """The receipt once mined (rfqkit/receipts.py: batched with every other wait on this
        chain; ReceiptMissing once the node made no progress for a while). `sent`: the sender
        and nonce, for the error, when the transaction was not sent by `send_transaction`."""
        return await self._receipts.receipt(tx_hash, sent or self._sent.pop(tx_hash, None))

    async def receipts(self, tx_hashes: list[str]) -> list[dict[str, Any]]:
        """Every receipt, in order, awaited together."""
        sent = {h: s for h in tx_hashes if (s := self._sent.pop(h, None)) is not None}
        return await self._receipts.receipts(tx_hashes, sent)

    async def call(self, to: str | None, data: bytes) -> bytes:
        result = await self.rpc("eth_call", call_params(to, data))
        return bytes.fromhex(cast(str, result)[2:])

    async def calls(self, calls: list[tuple[str | None, bytes]]) -> list[bytes]:
        """Several eth_calls in one batch."""
        results = await self.batch([("eth_call", call_params(to, data)) for to, data in calls])
        return [bytes.fromhex(cast(str, r)[2:]) for r in results]


def call_params(to: str | None, data: bytes) -> list[Any]:
    call: dict[str, str] = {"data": "0x" + data.hex()}
    if to is not None:
        call["to"] = to
    return [call, "latest"]
