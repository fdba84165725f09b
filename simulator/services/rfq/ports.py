"""Ports of the RFQ area: the chain reads proof of funds, quote checks and settlement need, the
channel to each connected maker, and the simulated maker fleet /_sim/makers controls. Adapters
(adapters/rfq/chain_reads.py, maker_stream.py, fleet.py) implement them; unit tests implement
them with fakes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rfqkit.chain_errors import ChainUnreadable

__all__ = [
    "BalanceReader",
    "ChainUnreadable",
    "FleetMemberStatus",
    "MakerChainReader",
    "MakerGateway",
    "SimulatedFleet",
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


@dataclass(frozen=True)
class FleetMemberStatus:
    """One simulated maker as /_sim/makers shows it."""

    name: str
    wallet: str  # its funding wallet
    behaviour: str  # normal, silent, late, decline, bad_signature, underfunded or flaky
    online: bool  # configured to be connected
    connected: bool  # connected right now
    chains: list[int]  # chains it is ready to quote on
    live_quotes: int  # its quotes that still hold inventory
    stats: dict[str, Any]  # counters of what it answered and heard
    config: dict[str, Any]  # its settings as JSON, without the private key


class SimulatedFleet(Protocol):
    """The simulator's own maker fleet (makers/fleet.py), which starts once the API listens."""

    def members(self) -> list[FleetMemberStatus]:
        """Every simulated maker in fleet order; none before the fleet runs, or without one."""
        ...

    async def reconfigure(self, name: str, changes: Mapping[str, Any]) -> None:
        """Change one maker live (the fields of /_sim/makers/{name}). Raises NotFound for a name
        the fleet does not have, InvalidRequest for values the maker refuses, UpstreamError when
        it was asked to go online and could not reconnect."""
        ...
