"""Ports of the RFQ area: the store that holds every RFQ record, and the chain reads proof of
funds, quote checks and settlement need. Adapters (adapters/rfq/chain_reads.py) implement the
chain reads; store.py holds the in-memory store; unit tests implement them with fakes."""

from __future__ import annotations

from typing import Protocol

from rfqkit.chain_errors import ChainUnreadable
from simulator.services.rfq.model import Fill, RfqRecord

__all__ = [
    "BalanceReader",
    "ChainUnreadable",
    "MakerChainReader",
    "RfqStore",
    "TxStatusReader",
]


class RfqStore(Protocol):
    """The only holder of RFQ record state (DESIGN: one store per area; reset and snapshot work
    store by store): the records, the index fills find them by, the Fill logs seen per RFQ and
    every fill seen on the reactors. No method awaits, so each call is atomic on the event loop;
    a caller that reads, awaits and then writes must re-check after the await or hold a lock."""

    def add(self, record: RfqRecord) -> None:
        """A new RFQ, from the moment makers are asked (status soliciting)."""
        ...

    def get(self, rfq_id: str) -> RfqRecord | None: ...

    def discard(self, rfq_id: str) -> None:
        """Forget an RFQ whose request failed while it was still soliciting."""
        ...

    def all(self) -> list[RfqRecord]:
        """Every RFQ, oldest first; a copy, so the store may change while the caller iterates."""
        ...

    def index_orders(self, record: RfqRecord) -> None:
        """A quote was issued: its maker orders now lead fills to this RFQ."""
        ...

    def by_order_hash(self, order_hash: bytes) -> RfqRecord | None:
        """The RFQ whose quote holds the order (None: a v1 order, or none of ours)."""
        ...

    def add_fill(self, rfq_id: str, fill: Fill) -> list[Fill]:
        """Remember one Fill log of an RFQ's orders (one per order hash); returns every one seen
        so far, in arrival order."""
        ...

    def add_trade(self, fill: Fill) -> None:
        """Any fill on a reactor, ours or not (the trade history)."""
        ...

    def trades(self) -> list[Fill]:
        """Every fill seen on every reactor, in arrival order."""
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
