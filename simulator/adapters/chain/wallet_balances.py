"""WalletBalances over the chains' JSON-RPC: one batch per chain (block number, every wallet's
native balance and `balanceOf` of every token)."""

from __future__ import annotations

from typing import Any

from eth_abi.abi import encode
from eth_utils.abi import function_signature_to_4byte_selector

from rfqkit.chain import AnvilChain, ChainUnavailable
from simulator.services.sim.wallets import ChainHoldings, WalletHoldings, WatchedWallet

BALANCE_OF = function_signature_to_4byte_selector("balanceOf(address)")


class ChainWalletBalances:
    def __init__(self, chains: dict[int, AnvilChain]) -> None:
        self._chains = chains  # filled at start-up

    async def read(
        self, chain_id: int, wallets: list[WatchedWallet], tokens: dict[str, str]
    ) -> ChainHoldings:
        chain = self._chains.get(chain_id)
        if chain is None:
            raise ChainUnavailable(f"chain {chain_id} is not running")
        calls: list[tuple[str, list[Any]]] = [("eth_blockNumber", [])]
        for wallet in wallets:
            calls.append(("eth_getBalance", [wallet.address, "latest"]))
            for address in tokens.values():
                data = "0x" + (BALANCE_OF + encode(["address"], [wallet.address])).hex()
                calls.append(("eth_call", [{"to": address, "data": data}, "latest"]))
        results = iter(await chain.batch(calls))
        block = int(next(results), 16)
        held = []
        for wallet in wallets:
            native = int(next(results), 16)
            balances = {symbol: int(next(results) or "0x0", 16) for symbol in tokens}
            held.append(WalletHoldings(wallet, native, balances))
        return ChainHoldings(chain_id, block, None, held)
