"""Ports of the RFQ area: the chain reads proof of funds, quote checks and settlement need, and
the channel to each connected maker. Adapters (adapters/rfq/chain_reads.py,
adapters/rfq/maker_stream.py) implement them; unit tests implement them with fakes."""

from __future__ import annotations

from typing import Any, Protocol

from rfqkit.chain_errors import ChainUnreadable

__all__ = [
    "BalanceReader",
    "ChainUnreadable",
    "MakerChainReader",
    "MakerGateway",
    "TxStatusReader",
]


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


class MakerGateway(Protocol):
    """The channel to one connected maker: the registry, the auction and settlement send it
    the server's messages of docs/maker-protocol.md (`rfq`, `released`, `filled`, ...)."""

    async def send(self, message: dict[str, Any]) -> None:
        """One message, as its JSON object. Raises ConnectionError (or RuntimeError) when the
        connection is already gone; callers treat that as a maker that did not hear it."""
        ...

    async def close(self, code: int, reason: str) -> None:
        """End the connection with a close code of the protocol (4001 replaced, ...)."""
        ...
