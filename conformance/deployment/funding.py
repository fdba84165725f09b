"""Taker funds on chain: :func:`fund_wallet` gives a fresh (or given) wallet tokens and native
coin from a demo wallet, :func:`create_smart_account` deploys an ERC-1271 smart account through
the venue's wallet factory and :func:`smart_account_batch` builds its ``executeBatch`` calldata,
and :class:`Balances` snapshots ERC-20 balances of several holders so a test can compare them
before and after a trade. Everything goes through chain JSON-RPC with locally signed
transactions.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address

from conformance.deployment import loans
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import Chain, calldata
from rfqkit.wallets import Wallet

NATIVE = 10**18  # one whole native coin (18 decimals)


def fund_wallet(
    chain: VenueChain,
    source: Wallet,
    tokens: Mapping[str, int],
    *,
    native: int = NATIVE,
    wallet: Wallet | None = None,
) -> Wallet:
    """A fresh (or the given) wallet holding ``tokens`` ({token address: atomic amount}) and
    ``native`` coin, transferred from ``source`` (a demo wallet, else the QA team's last taker
    wallet), which gets back whatever the wallet holds at the end of the run."""
    node = chain.rpc()
    target = wallet or Wallet.create()
    # A loan, noted before the first transfer: the run gives it back at its end (loans.py).
    loans.record(node, source, target, tuple(chain.tokens.values()), tokens, native)
    if native:
        node.transact(source, target.address, value=native, gas=21_000)
    for token, amount in tokens.items():
        if amount:
            node.transfer(source, token, target.address, amount)
    return target


# -- balances -----------------------------------------------------------------------------


@dataclass
class Balances:
    """ERC-20 balances of several holders, to compare before and after a trade."""

    chain: Chain
    tokens: tuple[str, ...]
    holders: tuple[str, ...]
    values: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def read(cls, chain: Chain, tokens: Iterable[str], holders: Iterable[str]) -> Balances:
        snapshot = cls(
            chain,
            tuple(dict.fromkeys(to_checksum_address(t) for t in tokens)),
            tuple(dict.fromkeys(to_checksum_address(h) for h in holders)),
        )
        for token in snapshot.tokens:
            for holder in snapshot.holders:
                snapshot.values[(token, holder)] = chain.balance_of(token, holder)
        return snapshot

    def again(self) -> Balances:
        return Balances.read(self.chain, self.tokens, self.holders)

    def of(self, token: str, holder: str) -> int:
        return self.values[(to_checksum_address(token), to_checksum_address(holder))]

    def delta(self, later: Balances, token: str, holder: str) -> int:
        return later.of(token, holder) - self.of(token, holder)


# -- smart accounts -----------------------------------------------------------------------


def create_smart_account(chain: VenueChain, owner: Wallet, salt: int | None = None) -> str:
    """Deploy a SmartWallet for ``owner`` through the factory (owner pays gas); its address."""
    node = chain.rpc()
    salt = secrets.randbits(64) if salt is None else salt
    factory = chain.wallet_factory
    lookup = calldata("getAddress(address,uint256)", ["address", "uint256"], [owner.address, salt])
    (account,) = abi_decode(["address"], node.call(factory, lookup))
    node.transact(
        owner,
        factory,
        calldata("createAccount(address,uint256)", ["address", "uint256"], [owner.address, salt]),
    )
    assert node.code(account), f"no code at the smart account {account}"
    return to_checksum_address(account)


def smart_account_batch(calls: Sequence[tuple[str, int, bytes]]) -> bytes:
    """Calldata of ``SmartWallet.executeBatch((address,uint256,bytes)[])``."""
    return calldata(
        "executeBatch((address,uint256,bytes)[])",
        ["(address,uint256,bytes)[]"],
        [[(to_checksum_address(to), value, data) for to, value, data in calls]],
    )
