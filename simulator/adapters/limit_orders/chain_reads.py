"""The book's chain reads: the head, and the makers' funding and Permit2 nonce bits of many
resting orders in one JSON-RPC batch, at one block (implements services/limit_orders/ports.py
BookChainReader). The selectors and the per-order read are the RFQ adapter's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eth_abi.abi import encode

from contracts.orders import nonce_word_and_mask
from rfqkit.chain import AnvilChain, CallReverted, ChainUnavailable, call_params
from simulator.adapters.rfq.chain_reads import ALLOWANCE, BALANCE_OF, NONCE_BITMAP
from simulator.services.limit_orders.ports import FundingKey, NonceRef, ResourceState


def _uint(chain_id: int, raw: Any) -> int:
    if not isinstance(raw, str) or not raw.startswith("0x") or len(raw) < 66:
        raise ChainUnavailable(f"chain {chain_id}: short answer reading the book's state")
    return int(raw[2:66], 16)


class BookChainReads:
    def __init__(self, chains: dict[int, AnvilChain]) -> None:
        self._chains = chains  # filled by the chain runtime at start-up

    def _chain(self, chain_id: int) -> AnvilChain:
        chain = self._chains.get(chain_id)
        if chain is None:
            raise ChainUnavailable(f"chain {chain_id} is not configured")
        return chain

    async def head(self, chain_id: int) -> int:
        return int(await self._chain(chain_id).rpc("eth_blockNumber"), 16)

    async def resources(
        self,
        chain_id: int,
        signature_transfer: str,
        funding: Sequence[FundingKey],
        nonces: Sequence[NonceRef],
    ) -> ResourceState:
        chain = self._chain(chain_id)
        words = list(dict.fromkeys((m.lower(), nonce_word_and_mask(n)[0]) for m, n in nonces))
        calls: list[tuple[str, list[Any]]] = [("eth_blockNumber", [])]
        for token, maker in funding:
            calls.append(
                ("eth_call", call_params(token, BALANCE_OF + encode(["address"], [maker])))
            )
            calls.append(
                (
                    "eth_call",
                    call_params(
                        token,
                        ALLOWANCE + encode(["address", "address"], [maker, signature_transfer]),
                    ),
                )
            )
        for maker, word in words:
            calls.append(
                (
                    "eth_call",
                    call_params(
                        signature_transfer,
                        NONCE_BITMAP + encode(["address", "uint256"], [maker, word]),
                    ),
                )
            )
        try:
            results = await chain.batch(calls)
        except CallReverted as exc:
            raise ChainUnavailable(str(exc)) from exc
        block = int(results[0], 16)
        spendable: dict[FundingKey, int] = {}
        at = 1
        for token, maker in funding:
            balance, allowance = _uint(chain_id, results[at]), _uint(chain_id, results[at + 1])
            spendable[(token.lower(), maker.lower())] = min(balance, allowance)
            at += 2
        bitmaps = {key: _uint(chain_id, results[at + i]) for i, key in enumerate(words)}
        spent: dict[NonceRef, bool] = {}
        for maker, nonce in nonces:
            word, mask = nonce_word_and_mask(nonce)
            spent[(maker.lower(), nonce)] = bool(bitmaps[(maker.lower(), word)] & mask)
        return ResourceState(block=block, spendable=spendable, spent=spent)
