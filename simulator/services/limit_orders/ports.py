"""Ports of the limit-orders area (the book): chain reads of the makers' funding and Permit2
nonces, the chain head that tells a view is still current, the fill index catching up on demand,
and the signature check for contract makers. The single-order read (`MakerChainReader`) and the
ERC-1271 check (`SignatureChecker`) are the RFQ and access areas' ports, reused as they are;
adapters/limit_orders/chain_reads.py implements the book's own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rfqkit.chain_errors import ChainUnreadable
from simulator.services.access.ports import SignatureChecker
from simulator.services.rfq.ports import MakerChainReader
from simulator.services.shared.amounts import Curve

__all__ = [
    "BookChainReader",
    "ChainUnreadable",
    "FillCatchUp",
    "FillerBids",
    "FundingKey",
    "MakerChainReader",
    "NonceRef",
    "ResourceState",
    "SignatureChecker",
]

FundingKey = tuple[str, str]  # (token, maker), addresses in any case
NonceRef = tuple[str, int]  # (maker, Permit2 nonce)


@dataclass(frozen=True)
class ResourceState:
    """What one batch read saw at one block: each maker's spendable amount of each token (the
    smaller of its balance and its allowance to the signature-transfer contract) and which of
    the given nonces are spent."""

    block: int
    spendable: Mapping[FundingKey, int]  # keys lowercase
    spent: Mapping[NonceRef, bool]  # makers lowercase


class BookChainReader(Protocol):
    async def head(self, chain_id: int) -> int:
        """The newest block number. Raises ChainUnreadable."""
        ...

    async def resources(
        self,
        chain_id: int,
        signature_transfer: str,
        funding: Sequence[FundingKey],
        nonces: Sequence[NonceRef],
    ) -> ResourceState:
        """Balances, allowances to `signature_transfer` and nonce bits, in one batch at one
        block. Raises ChainUnreadable."""
        ...


class FillCatchUp(Protocol):
    async def catch_up(self, chain_id: int) -> None:
        """Index the chain's fills up to its head now (every fill found is handed to the
        subscribers before this returns). Does nothing while the index is paused; raises
        ChainUnreadable when the chain cannot be read."""
        ...


class FillerBids(Protocol):
    def filler_curves(self, environment: str, key: tuple[int, str, str]) -> list[tuple[str, Curve]]:
        """(wallet, fresh published levels) of every filling operator online for the chain's
        environment in one direction (chain id, sellToken, buyToken, lowercase): a taker selling
        sellToken receives buyToken. Those are the bids fastFill crosses."""
        ...
