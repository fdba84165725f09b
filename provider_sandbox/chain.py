"""The sandbox's own access to each Anvil chain: NGNS payouts from the provider treasury and
balance reads of deposit addresses. It talks JSON-RPC through the simulator's lean client
(a library here: the sandbox never sees the simulator's services or state)."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from eth_abi.abi import decode, encode
from eth_account import Account
from eth_utils.abi import function_signature_to_4byte_selector

from provider_sandbox.config import SandboxChain
from rfqkit.chain import GAS_PRICE_WEI, AnvilChain, ChainUnavailable

TRANSFER_SELECTOR = function_signature_to_4byte_selector("transfer(address,uint256)")
BALANCE_OF_SELECTOR = function_signature_to_4byte_selector("balanceOf(address)")
TOKEN_TRANSFER_GAS = 120_000  # an ERC-20 transfer to a fresh address costs ~52k

__all__ = ["ChainUnavailable", "SandboxChainAccess", "to_units"]


def to_units(amount: Decimal, decimals: int) -> int:
    return int(amount.scaleb(decimals))


class SandboxChainAccess:
    def __init__(self, chain: SandboxChain, treasury_key: str) -> None:
        self.chain = chain  # where and what
        self.client = AnvilChain(chain.chain_id, chain.rpc_url)  # one keep-alive session
        self._treasury = Account.from_key(treasury_key)  # signs every payout on this chain
        # Guards the treasury nonce between reading it and broadcasting, so parallel payouts
        # get consecutive nonces. The nonce is read from the node every time ("pending") rather
        # than cached: a test may revert the chain, and the simulator may use the wallet too.
        self._send_lock = asyncio.Lock()

    @property
    def treasury_address(self) -> str:
        return str(self._treasury.address)

    async def close(self) -> None:
        await self.client.close()

    async def send_token(self, to: str, units: int) -> str:
        """Broadcast an NGNS transfer from the treasury; returns the hash without waiting for
        the receipt."""
        sender = self._treasury
        data = TRANSFER_SELECTOR + encode(["address", "uint256"], [to, units])
        async with self._send_lock:
            nonce = await self.client.nonce(sender.address)
            tx: dict[str, Any] = {
                "chainId": self.chain.chain_id,
                "nonce": nonce,
                "gas": TOKEN_TRANSFER_GAS,
                "gasPrice": GAS_PRICE_WEI,
                "value": 0,
                "to": self.chain.token_address,
                "data": data,
            }
            signed = sender.sign_transaction(tx)
            tx_hash = await self.client.rpc(
                "eth_sendRawTransaction", ["0x" + signed.raw_transaction.hex()]
            )
        return str(tx_hash)

    async def wait_receipt(self, tx_hash: str) -> bool:
        receipt = await self.client.receipt(tx_hash)
        return int(receipt["status"], 16) == 1

    async def balances(self, owners: list[str]) -> list[int]:
        """NGNS balances in atomic units, one batch round trip."""
        if not owners:
            return []
        token = self.chain.token_address
        results = await self.client.calls(
            [(token, BALANCE_OF_SELECTOR + encode(["address"], [owner])) for owner in owners]
        )
        return [int(decode(["uint256"], r)[0]) for r in results]
