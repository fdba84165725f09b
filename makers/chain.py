"""What a simulated maker reads and writes on chain: token symbols, balances, allowances and the
one-time approval of the signature-transfer contract, over the chain's JSON-RPC URL with the
shared lean client (`rfqkit.chain.AnvilChain`: one keep-alive aiohttp session, asyncio only).
Transactions are signed locally with the maker's key (no unlocked node accounts).

Not web3's async provider: it guards its session cache with a `threading.Lock` acquired through
`run_in_executor` (web3.py issue 3867). A call cancelled while that acquire is pending leaves a
pool thread that takes the lock after its owner already "released" it, so every later chain call
of the process waits on it, and the interpreter's exit joins that thread forever (a `rfqsim
serve` stopped under load never exited). Nothing here leaves the event loop.

`MakerChain` is the narrow interface the fleet depends on, so unit tests can give it a fake."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, runtime_checkable

from eth_abi.abi import decode, encode
from eth_account import Account
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from rfqkit.chain import AnvilChain
from rfqkit.receipts import Sent

MAX_UINT256 = 2**256 - 1
# An allowance at or above this is "max approval" (tokens may decrement a max allowance).
ALLOWANCE_REFILL_BELOW = 2**255
APPROVE_GAS = 100_000


def _selector(signature: str) -> bytes:
    return keccak(text=signature)[:4]


SYMBOL = _selector("symbol()")
BALANCE_OF = _selector("balanceOf(address)")
ALLOWANCE = _selector("allowance(address,address)")
APPROVE = _selector("approve(address,uint256)")


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


class RpcMakerChain:
    """MakerChain over JSON-RPC (`AnvilChain`). `close()` closes its HTTP session."""

    def __init__(self, chain_id: int, rpc_url: str, *, timeout_s: float = 10.0) -> None:
        self.chain_id = chain_id
        self.rpc_url = rpc_url
        self.rpc = AnvilChain(chain_id, rpc_url, timeout_s=timeout_s)
        self._senders: dict[str, asyncio.Lock] = {}  # per account: one nonce lookup+send at a time

    async def remote_chain_id(self) -> int:
        return await self.rpc.remote_chain_id()

    async def _read(self, token: str, data: bytes, types: list[str]) -> Any:
        return decode(types, await self.rpc.call(to_checksum_address(token), data))[0]

    async def token_symbol(self, token: str) -> str:
        return str(await self._read(token, SYMBOL, ["string"]))

    async def balance_of(self, token: str, owner: str) -> int:
        data = BALANCE_OF + encode(["address"], [to_checksum_address(owner)])
        return int(await self._read(token, data, ["uint256"]))

    async def allowance(self, token: str, owner: str, spender: str) -> int:
        data = ALLOWANCE + encode(
            ["address", "address"], [to_checksum_address(owner), to_checksum_address(spender)]
        )
        return int(await self._read(token, data, ["uint256"]))

    async def _transact(
        self, private_key: str, to: str, data: bytes, gas: int
    ) -> tuple[str, dict[str, Any]]:
        """Sign and send with the account's pending nonce (one send per account at a time), wait
        for the receipt; returns the transaction hash and the receipt."""
        account = Account.from_key(private_key)
        async with self._senders.setdefault(account.address.lower(), asyncio.Lock()):
            nonce, gas_price = await self.rpc.batch(
                [("eth_getTransactionCount", [account.address, "pending"]), ("eth_gasPrice", [])]
            )
            tx: dict[str, Any] = {
                "chainId": self.chain_id,
                "nonce": int(nonce, 16),
                "gas": gas,
                "gasPrice": int(gas_price, 16),
                "to": to_checksum_address(to),
                "value": 0,
                "data": data,
            }
            raw = "0x" + account.sign_transaction(tx).raw_transaction.hex()
            tx_hash = str(await self.rpc.rpc("eth_sendRawTransaction", [raw]))
        sent = Sent(account.address, int(nonce, 16), raw)
        return tx_hash, await self.rpc.receipt(tx_hash, sent)

    async def send(self, private_key: str, to: str, data: bytes, *, gas: int) -> tuple[str, bool]:
        tx_hash, receipt = await self._transact(private_key, to, data, gas)
        return tx_hash, int(receipt["status"], 16) == 1

    async def approve(self, private_key: str, token: str, spender: str, amount: int) -> str:
        # USDT-like tokens return no bool from approve; a transaction never decodes the return.
        data = APPROVE + encode(["address", "uint256"], [to_checksum_address(spender), amount])
        tx_hash, receipt = await self._transact(private_key, token, data, APPROVE_GAS)
        if int(receipt["status"], 16) != 1:
            raise ApprovalFailed(
                f"chain {self.chain_id}: approve({spender}, {amount}) on {token} reverted "
                f"(tx {tx_hash})"
            )
        return tx_hash

    async def close(self) -> None:
        await self.rpc.close()


def connect(chain_id: int, rpc_url: str) -> MakerChain:
    """The chain access the fleet makes for itself from an RPC URL."""
    return RpcMakerChain(chain_id, rpc_url)


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
