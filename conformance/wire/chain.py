"""A chain seen the way an integrator's script sees it: raw JSON-RPC and locally signed
transactions, nothing of the venue. :class:`Chain` reads with ``eth_call`` (ERC-20 balances and
allowances, code, block time), signs legacy transactions with a :class:`Wallet`'s key through
``eth_account`` (so a hash is known before it is broadcast), broadcasts them and waits, bounded,
for receipts, raising :class:`TxFailed` on a revert. Beside it: ABI calldata (:func:`selector`,
:func:`calldata`, the ERC-20 writes), :func:`hex_bytes` for 0x fields on the wire, and
:func:`wait_for`, the bounded poll every other helper of the suite uses. The simulator is never
imported.
"""

from __future__ import annotations

import fcntl
import hashlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from eth_abi.abi import decode as abi_decode
from eth_abi.abi import encode as abi_encode
from eth_account import Account
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from rfqkit.json_rpc import RpcError, hex_to_int, rpc
from rfqkit.wallets import Wallet

T = TypeVar("T")

WAIT_TIMEOUT = 10.0  # seconds: the bound of every poll in these helpers unless told otherwise
POLL_INTERVAL = 0.1


def selector(signature: str) -> bytes:
    return keccak(text=signature)[:4]


def calldata(signature: str, types: Sequence[str], values: Sequence[Any]) -> bytes:
    """``selector(signature) ++ abi.encode(types, values)``."""
    return selector(signature) + abi_encode(list(types), list(values))


def wait_for(
    probe: Callable[[], T | None],
    *,
    timeout: float = WAIT_TIMEOUT,
    interval: float = POLL_INTERVAL,
    what: str = "condition",
) -> T:
    """Call ``probe`` until it returns something other than None; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(interval)


@contextmanager
def sender_lock(rpc_url: str, address: str) -> Iterator[None]:
    """Hold the lock file of (chain, sender) for the ``with`` block, across processes."""
    tag = hashlib.sha256(f"{rpc_url}|{address.lower()}".encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"rfqsim-conformance-sender-{tag}.lock"
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class TxFailed(AssertionError):
    """A transaction reverted (or could not be sent)."""


@dataclass(frozen=True)
class SignedTx:
    raw: bytes
    tx_hash: str  # lowercase 0x hex


class Chain:
    """One chain through raw JSON-RPC; transactions are signed locally."""

    def __init__(self, url: str, chain_id: int) -> None:
        self.url = url
        self.chain_id = chain_id

    def rpc(self, method: str, params: list[Any] | None = None) -> Any:
        return rpc(self.url, method, params or [])

    def call(self, to: str, data: bytes, *, sender: str | None = None) -> bytes:
        tx: dict[str, str] = {"to": to, "data": "0x" + data.hex()}
        if sender is not None:
            tx["from"] = sender
        result = self.rpc("eth_call", [tx, "latest"])
        return bytes.fromhex(str(result).removeprefix("0x"))

    def balance_of(self, token: str, owner: str) -> int:
        out = self.call(token, calldata("balanceOf(address)", ["address"], [owner]))
        value: int = abi_decode(["uint256"], out)[0]
        return value

    def allowance(self, token: str, owner: str, spender: str) -> int:
        out = self.call(
            token,
            calldata("allowance(address,address)", ["address", "address"], [owner, spender]),
        )
        value: int = abi_decode(["uint256"], out)[0]
        return value

    def native_balance(self, owner: str) -> int:
        return hex_to_int(self.rpc("eth_getBalance", [owner, "latest"]))

    def code(self, address: str) -> bytes:
        return bytes.fromhex(str(self.rpc("eth_getCode", [address, "latest"]))[2:])

    def block_timestamp(self) -> int:
        block = self.rpc("eth_getBlockByNumber", ["latest", False])
        return hex_to_int(block["timestamp"])

    def send(
        self,
        wallet: Wallet,
        to: str | None,
        data: bytes = b"",
        *,
        value: int = 0,
        gas: int | None = None,
        gas_price: int | None = None,
    ) -> str:
        """Sign and broadcast one transaction; returns its hash (does not wait). One sender at a
        time per wallet across processes: a given wallet (the QA team's, funding fresh takers)
        is shared by the xdist workers, and two of them reading the same pending nonce would
        have one transaction refused ("nonce too low")."""
        with sender_lock(self.url, wallet.address):
            signed = self.sign(wallet, to, data, value=value, gas=gas, gas_price=gas_price)
            return self.broadcast(signed)

    def broadcast(self, signed: SignedTx) -> str:
        tx_hash = self.rpc("eth_sendRawTransaction", ["0x" + signed.raw.hex()])
        assert str(tx_hash).lower() == signed.tx_hash, (tx_hash, signed.tx_hash)
        return signed.tx_hash

    def sign(
        self,
        wallet: Wallet,
        to: str | None,
        data: bytes = b"",
        *,
        value: int = 0,
        gas: int | None = None,
        gas_price: int | None = None,
    ) -> SignedTx:
        """Sign (not send) one legacy transaction with the next nonce; its hash is known before
        it is broadcast, so it can be reported to /submit first. ``to`` None creates a contract
        (``data``: its creation code). ``gas_price`` defaults to the node's ``eth_gasPrice``."""
        sender = wallet.address
        nonce = hex_to_int(self.rpc("eth_getTransactionCount", [sender, "pending"]))
        if gas_price is None:
            gas_price = hex_to_int(self.rpc("eth_gasPrice"))
        if gas is None:
            estimate_tx = {"from": sender, "data": "0x" + data.hex(), "value": hex(value)}
            if to is not None:
                estimate_tx["to"] = to
            try:
                gas = hex_to_int(self.rpc("eth_estimateGas", [estimate_tx])) * 13 // 10 + 20_000
            except RpcError as exc:
                raise TxFailed(f"transaction to {to} would revert: {exc.error!r}") from exc
        tx: dict[str, Any] = {
            "chainId": self.chain_id,
            "nonce": nonce,
            "value": value,
            "data": data,
            "gas": gas,
            "gasPrice": gas_price,
        }
        if to is not None:
            tx["to"] = to_checksum_address(to)
        signed = Account.sign_transaction(tx, wallet.private_key)
        return SignedTx(bytes(signed.raw_transaction), "0x" + bytes(signed.hash).hex())

    def wait_receipt(self, tx_hash: str, *, timeout: float = WAIT_TIMEOUT) -> dict[str, Any]:
        def probe() -> dict[str, Any] | None:
            receipt = self.rpc("eth_getTransactionReceipt", [tx_hash])
            return receipt if isinstance(receipt, dict) else None

        return wait_for(probe, timeout=timeout, what=f"the receipt of {tx_hash}")

    def transact(
        self,
        wallet: Wallet,
        to: str | None,
        data: bytes = b"",
        *,
        value: int = 0,
        gas: int | None = None,
        gas_price: int | None = None,
    ) -> dict[str, Any]:
        """Send, wait for the receipt and require success; returns the receipt."""
        tx_hash = self.send(wallet, to, data, value=value, gas=gas, gas_price=gas_price)
        receipt = self.wait_receipt(tx_hash)
        if hex_to_int(receipt.get("status")) != 1:
            raise TxFailed(f"transaction {tx_hash} to {to} reverted: {receipt!r}")
        return receipt

    def deploy(self, wallet: Wallet, creation_code: bytes) -> str:
        """Deploy a contract from ``wallet`` (which pays the gas); returns its address."""
        receipt = self.transact(wallet, None, creation_code)
        return to_checksum_address(str(receipt["contractAddress"]))

    # ERC-20 writes
    def transfer(self, wallet: Wallet, token: str, to: str, amount: int) -> dict[str, Any]:
        return self.transact(wallet, token, erc20_transfer(to, amount))

    def approve(self, wallet: Wallet, token: str, spender: str, amount: int) -> dict[str, Any]:
        return self.transact(wallet, token, erc20_approve(spender, amount))


TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()


def token_transfers_to(receipt: dict[str, Any], token: str, to: str) -> list[int]:
    """Amounts of the ERC-20 Transfer logs in ``receipt`` of ``token`` to ``to``."""
    return [amount for _, dest, amount in _transfers(receipt, token) if dest == _address(to)]


def token_delta(receipt: dict[str, Any], token: str, holder: str) -> int:
    """What the transaction of ``receipt`` moved of ``token`` into ``holder`` (received minus
    sent), from its own Transfer logs: exact even while other transactions move the same
    holder's balance (a venue's fee recipient, shared by every fill)."""
    mine = _address(holder)
    return sum(
        amount if dest == mine else -amount
        for source, dest, amount in _transfers(receipt, token)
        if mine in (source, dest)
    )


def _address(value: str) -> str:
    return to_checksum_address(value)


def _transfers(receipt: dict[str, Any], token: str) -> list[tuple[str, str, int]]:
    """(from, to, amount) of each ERC-20 Transfer log of ``token`` in ``receipt``."""
    found = []
    for log in receipt.get("logs") or []:
        topics = log.get("topics") or []
        if (
            _address(log["address"]) == _address(token)
            and len(topics) == 3
            and topics[0].lower() == TRANSFER_TOPIC
        ):
            source = _address("0x" + topics[1][-40:])
            dest = _address("0x" + topics[2][-40:])
            found.append((source, dest, hex_to_int(log["data"])))
    return found


def erc20_transfer(to: str, amount: int) -> bytes:
    return calldata("transfer(address,uint256)", ["address", "uint256"], [to, amount])


def erc20_approve(spender: str, amount: int) -> bytes:
    return calldata("approve(address,uint256)", ["address", "uint256"], [spender, amount])


def hex_bytes(value: Any) -> bytes:
    assert isinstance(value, str), f"not 0x hex: {value!r}"
    assert value.startswith("0x"), f"not 0x hex: {value!r}"
    return bytes.fromhex(value[2:])
