"""Chain reads the services need (balances, allowances, Permit2 nonces, receipts), through the
JSON-RPC adapter. Every failure to read surfaces as ChainUnreadable (a port-level exception).
The quote path's eth_calls (taker balance, maker funding) are coalesced per event-loop turn into
one JSON-RPC batch per chain (read_batch.py); none of them is cached. Their arguments are
static ABI words, written directly (contracts/orders.py encode_static): eth_abi's generic
encoder cost about 0.1 ms per maker answer checked."""

from __future__ import annotations

from eth_utils.abi import function_signature_to_4byte_selector

from contracts.orders import encode_static, nonce_word_and_mask
from rfqkit.chain import AnvilChain, CallReverted, ChainUnavailable
from simulator.adapters.rfq.read_batch import ReadBatcher

BALANCE_OF = function_signature_to_4byte_selector("balanceOf(address)")
ALLOWANCE = function_signature_to_4byte_selector("allowance(address,address)")
NONCE_BITMAP = function_signature_to_4byte_selector("nonceBitmap(address,uint256)")


class ChainReads:
    def __init__(self, chains: dict[int, AnvilChain]) -> None:
        self._chains = chains  # filled by the chain runtime at start-up
        self._batchers: dict[int, ReadBatcher] = {}  # per chain id, for the chain object it has

    def _chain(self, chain_id: int) -> AnvilChain:
        chain = self._chains.get(chain_id)
        if chain is None:
            raise ChainUnavailable(f"chain {chain_id} is not configured")
        return chain

    def _batcher(self, chain_id: int) -> ReadBatcher:
        chain = self._chain(chain_id)
        batcher = self._batchers.get(chain_id)
        if batcher is None or batcher.chain is not chain:
            batcher = self._batchers[chain_id] = ReadBatcher(chain)
        return batcher

    async def _uint(self, chain_id: int, to: str, data: bytes) -> int:
        try:
            raw = await self._batcher(chain_id).call(to, data)
        except CallReverted as exc:
            raise ChainUnavailable(str(exc)) from exc
        if len(raw) < 32:
            raise ChainUnavailable(f"chain {chain_id}: {to} returned {len(raw)} bytes, expected 32")
        return int.from_bytes(raw[:32], "big")

    async def token_balance(self, chain_id: int, token: str, owner: str) -> int:
        return await self._uint(chain_id, token, BALANCE_OF + encode_static(["address"], [owner]))

    async def maker_funding(
        self, chain_id: int, token: str, maker: str, spender: str, nonce: int
    ) -> tuple[int, int, bool]:
        word, mask = nonce_word_and_mask(nonce)
        try:
            raw = await self._batcher(chain_id).calls(
                [
                    (token, BALANCE_OF + encode_static(["address"], [maker])),
                    (token, ALLOWANCE + encode_static(["address", "address"], [maker, spender])),
                    (spender, NONCE_BITMAP + encode_static(["address", "uint256"], [maker, word])),
                ]
            )
        except CallReverted as exc:
            raise ChainUnavailable(str(exc)) from exc
        if any(len(r) < 32 for r in raw):
            raise ChainUnavailable(f"chain {chain_id}: short answer reading maker funding")
        balance, allowance, bitmap = (int.from_bytes(r[:32], "big") for r in raw)
        return balance, allowance, bool(bitmap & mask)

    async def receipt_status(self, chain_id: int, tx_hash: str) -> bool | None:
        receipt = await self._chain(chain_id).rpc("eth_getTransactionReceipt", [tx_hash])
        if receipt is None:
            return None
        return int(receipt["status"], 16) == 1
