"""Typed ports: what the services need from the outside world. Adapters implement them; unit
tests implement them with fakes."""

from __future__ import annotations

from typing import Protocol


class ChainUnreadable(Exception):
    """A chain read failed (node down, timeout, RPC error): the answer is unknown, not false."""


class SignatureChecker(Protocol):
    async def is_valid_signature(
        self, chain_id: int, signer: str, digest: bytes, signature: bytes
    ) -> bool:
        """ERC-6492 / ERC-1271 / ecrecover verdict for `signer`, read on chain `chain_id`.
        Raises ChainUnreadable when the chain cannot be read."""
        ...


class BalanceReader(Protocol):
    async def token_balance(self, chain_id: int, token: str, owner: str) -> int:
        """ERC-20 balance; raises ChainUnreadable when the chain cannot be read."""
        ...


class MakerChainReader(Protocol):
    async def maker_funding(
        self, chain_id: int, token: str, maker: str, spender: str, nonce: int
    ) -> tuple[int, int, bool]:
        """(balance, allowance to `spender`, nonce already used) for a maker's order, read in
        one go. Raises ChainUnreadable when the chain cannot be read."""
        ...


class TxStatusReader(Protocol):
    async def receipt_status(self, chain_id: int, tx_hash: str) -> bool | None:
        """True mined and succeeded, False mined and reverted, None not mined (or unknown).
        Raises ChainUnreadable when the chain cannot be read."""
        ...
