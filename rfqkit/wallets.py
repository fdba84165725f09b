"""Deterministic well-known wallets: the same keys (and so the same addresses and contract
addresses) on every run and every machine. They are test keys, printed in the banner; never use
them on a real network."""

from __future__ import annotations

from dataclasses import dataclass

from eth_account import Account
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak


@dataclass(frozen=True)
class Wallet:
    """A private key and its address: what signs orders and transactions."""

    address: str  # checksummed
    private_key: str  # 0x-prefixed hex
    label: str = ""  # the name a well-known wallet is derived from; "" for one made on the spot

    @classmethod
    def create(cls) -> Wallet:
        """A fresh random wallet (a test's own taker or maker)."""
        account = Account.create()
        return cls(to_checksum_address(account.address), "0x" + bytes(account.key).hex())


def derive_wallet(label: str) -> Wallet:
    key = keccak(text=f"rfqsim:{label}")
    account = Account.from_key(key)
    return Wallet(label=label, address=account.address, private_key="0x" + key.hex())


DEPLOYER = derive_wallet("deployer")
FEE_RECIPIENT = derive_wallet("fee-recipient")
PROVIDER_TREASURY = derive_wallet("provider-treasury")


def maker_wallet(index: int) -> Wallet:
    return derive_wallet(f"maker-{index}")


def demo_wallet(index: int) -> Wallet:
    return derive_wallet(f"demo-taker-{index}")
