"""Fills as the reactor reports them, shared by every area that reads them: RFQ settlement
reconciles its quotes from them, the rates feed's tape publishes them as trades (and the v1 book
will reconcile its orders from them). One fill indexer per chain reads the reactor's `Fill` logs
and hands each one to every subscriber of a `FillFanout`; `IndexProgress` is what the indexers
report about themselves, so readers can tell a current index from a stale one."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

log = logging.getLogger("rfqsim.fills")


@dataclass(frozen=True)
class Fill:
    """One reactor Fill event: one filled maker order."""

    chain_id: int
    tx_hash: str  # lowercase 0x hex
    log_index: int
    block_time: float  # the block's timestamp (chain time follows the simulator clock)
    order_hash: bytes
    maker: str
    taker: str  # msg.sender of the execution (the wallet, or a router)
    input_token: str  # maker gave (the taker received it)
    input_amount: int
    output_token: str  # maker received (the taker paid it, plus the fee, in this token)
    output_amount: int
    fee_amount: int
    block_number: int = 0  # orders fills of one second (with log_index)

    @property
    def trade_id(self) -> str:
        """The rates feed's id: transaction hash and log index, unique even when one
        transaction fills several orders."""
        return f"{self.tx_hash}-{self.log_index}"

    @property
    def key(self) -> tuple[int, str, int]:
        """Unique per fill on the venue: the same transaction hash cannot carry two logs with
        one index, and the chain id keeps two chains apart."""
        return (self.chain_id, self.tx_hash, self.log_index)


FillSubscriber = Callable[[Fill], Awaitable[None]]


@dataclass
class FillFanout:
    """Hands every fill to each subscriber in turn. A subscriber that fails is logged and does
    not keep the fill from the others; an indexer may hand the same fill again (re-indexing),
    so every subscriber must be idempotent per `Fill.key`."""

    subscribers: list[FillSubscriber] = field(default_factory=list)

    def subscribe(self, subscriber: FillSubscriber) -> None:
        self.subscribers.append(subscriber)

    async def __call__(self, fill: Fill) -> None:
        for subscriber in self.subscribers:
            try:
                await subscriber(fill)
            except Exception:
                log.exception("fill subscriber %r failed on %s", subscriber, fill.trade_id)


IndexState = Literal["starting", "current", "paused", "unreachable"]


@dataclass
class ChainIndex:
    state: IndexState = "starting"  # what the last poll found
    last_current: float | None = None  # monotonic time of the last poll that reached the head
    detail: str = ""  # why it is not current (for the 502's message)


@dataclass
class IndexProgress:
    """Written by the fill indexers after every poll, read by whoever must know that the fills
    it holds are complete up to now (the rates feed answers 502 otherwise)."""

    chains: dict[int, ChainIndex] = field(default_factory=dict)  # by chain id

    def chain(self, chain_id: int) -> ChainIndex:
        return self.chains.setdefault(chain_id, ChainIndex())

    def mark(self, chain_id: int, state: IndexState, now: float, detail: str = "") -> None:
        entry = self.chain(chain_id)
        entry.state = state
        entry.detail = detail
        if state == "current":
            entry.last_current = now
