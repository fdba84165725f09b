"""What a simulated maker reads and writes on chain: token symbols, balances, allowances and the
one-time approval of the signature-transfer contract. web3 against the chain's JSON-RPC URL;
transactions are signed locally with the maker's key (no unlocked node accounts).

`MakerChain` is the narrow interface the fleet depends on, so unit tests can give it a fake."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, runtime_checkable

from eth_account import Account
from eth_utils.address import to_checksum_address
from web3 import AsyncHTTPProvider, AsyncWeb3
from web3.contract import AsyncContract
from web3.types import TxParams

from contracts.artifacts import load_artifact

MAX_UINT256 = 2**256 - 1
# An allowance at or above this is "max approval" (tokens may decrement a max allowance).
ALLOWANCE_REFILL_BELOW = 2**255
APPROVE_GAS = 100_000


class ApprovalFailed(RuntimeError):
    """An approve transaction was mined but reverted."""


class MakerChain(Protocol):
    """One chain as a maker sees it. Addresses may be in any case."""

    chain_id: int

    async def token_symbol(self, token: str) -> str: ...

    async def balance_of(self, token: str, owner: str) -> int: ...

    async def allowance(self, token: str, owner: str, spender: str) -> int: ...

    async def approve(self, private_key: str, token: str, spender: str, amount: int) -> str:
        """Send `approve(spender, amount)` from the key's account, wait until it is mined;
        returns the transaction hash, ApprovalFailed if it reverted."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class TxSender(Protocol):
    """A chain that also sends arbitrary transactions (the v1 book roles execute swaps)."""

    async def send(self, private_key: str, to: str, data: bytes, *, gas: int) -> tuple[str, bool]:
        """Send a transaction from the key's account and wait until it is mined; returns
        (transaction hash, succeeded)."""
        ...


class Web3MakerChain:
    """MakerChain over web3's async HTTP provider. `close()` closes the provider's sessions."""

    def __init__(self, chain_id: int, rpc_url: str, *, timeout_s: float = 10.0) -> None:
        self.chain_id = chain_id
        self.rpc_url = rpc_url
        self.w3 = AsyncWeb3(AsyncHTTPProvider(rpc_url, request_kwargs={"timeout": timeout_s}))
        self._abi = load_artifact("TestERC20").abi  # the standard ERC-20 surface
        self._senders: dict[str, asyncio.Lock] = {}  # per account: one nonce lookup+send at a time

    def _token(self, token: str) -> AsyncContract:
        return self.w3.eth.contract(address=to_checksum_address(token), abi=self._abi)

    async def remote_chain_id(self) -> int:
        return int(await self.w3.eth.chain_id)

    async def token_symbol(self, token: str) -> str:
        return str(await self._token(token).functions.symbol().call())

    async def balance_of(self, token: str, owner: str) -> int:
        return int(await self._token(token).functions.balanceOf(to_checksum_address(owner)).call())

    async def allowance(self, token: str, owner: str, spender: str) -> int:
        function = self._token(token).functions.allowance(
            to_checksum_address(owner), to_checksum_address(spender)
        )
        return int(await function.call())

    def _sender_lock(self, address: str) -> asyncio.Lock:
        return self._senders.setdefault(address.lower(), asyncio.Lock())

    async def send(self, private_key: str, to: str, data: bytes, *, gas: int) -> tuple[str, bool]:
        account = Account.from_key(private_key)
        async with self._sender_lock(account.address):
            tx: dict[str, Any] = {
                "from": account.address,
                "to": to_checksum_address(to),
                "data": data,
                "nonce": await self.w3.eth.get_transaction_count(account.address, "pending"),
                "gas": gas,
                "gasPrice": await self.w3.eth.gas_price,
                "chainId": self.chain_id,
                "value": 0,
            }
            signed = account.sign_transaction(tx)
            tx_hash = await self.w3.eth.send_raw_transaction(signed.raw_transaction)
        receipt = await self.w3.eth.wait_for_transaction_receipt(
            tx_hash, timeout=30, poll_latency=0.02
        )
        return "0x" + bytes(tx_hash).hex(), receipt["status"] == 1

    async def approve(self, private_key: str, token: str, spender: str, amount: int) -> str:
        account = Account.from_key(private_key)
        async with self._sender_lock(account.address):
            return await self._approve(account, token, spender, amount)

    async def _approve(self, account: Any, token: str, spender: str, amount: int) -> str:
        params: TxParams = {
            "from": account.address,
            "nonce": await self.w3.eth.get_transaction_count(account.address, "pending"),
            "gas": APPROVE_GAS,
            "gasPrice": await self.w3.eth.gas_price,
            "chainId": self.chain_id,
            "value": 0,  # type: ignore[typeddict-item]
        }
        # USDT-like tokens return no bool from approve; a transaction never decodes the return.
        tx: dict[str, Any] = dict(
            await self._token(token)
            .functions.approve(to_checksum_address(spender), amount)
            .build_transaction(params)
        )
        signed = account.sign_transaction(tx)
        tx_hash = await self.w3.eth.send_raw_transaction(signed.raw_transaction)
        receipt = await self.w3.eth.wait_for_transaction_receipt(
            tx_hash, timeout=30, poll_latency=0.02
        )
        if receipt["status"] != 1:
            raise ApprovalFailed(
                f"chain {self.chain_id}: approve({spender}, {amount}) on {token} reverted "
                f"(tx 0x{bytes(tx_hash).hex()})"
            )
        return "0x" + bytes(tx_hash).hex()

    async def close(self) -> None:
        await self.w3.provider.disconnect()


async def ensure_max_allowance(
    chain: MakerChain, private_key: str, owner: str, token: str, spender: str
) -> list[str]:
    """Make `spender`'s allowance over `owner`'s `token` the maximum; returns the transaction
    hashes sent (none when it already was). A nonzero allowance is first reset to zero: USDT-like
    tokens refuse nonzero -> nonzero, and for other tokens the extra step is harmless."""
    current = await chain.allowance(token, owner, spender)
    if current >= ALLOWANCE_REFILL_BELOW:
        return []
    sent = []
    if current != 0:
        sent.append(await chain.approve(private_key, token, spender, 0))
    sent.append(await chain.approve(private_key, token, spender, MAX_UINT256))
    return sent
