"""The book's state: every accepted limit order with its indexes, the swaps' holds on resting
orders, and the sweep's progress. Plain in-memory data owned by the limit-orders services (one
store per area, so reset and snapshots work store by store); every mutation happens without an
await in between its check and its write, so concurrent requests never see half an update."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

from simulator.services.limit_orders.model import LimitOrder
from simulator.services.shared.state import AsPairs, StateSchema

DirectionKey = tuple[int, str, str]  # (chain id, sellToken lowercase, buyToken lowercase)
NonceKey = tuple[int, str, int]  # (chain id, maker lowercase, Permit2 nonce)


@dataclass(frozen=True)
class SwapHold:
    """A built swap reserves its resting orders so no other swap (or the book) offers them."""

    swap_id: str  # the swap that reserved the order
    until: float  # simulator time the reservation ends (the swap's expiresAt)


@dataclass
class SweepState:
    runs: int = 0  # sweeps completed since start-up
    last_run_at: float | None = None  # simulator time the last completed sweep started
    next_run_at: float | None = None  # simulator time the next sweep is due


@dataclass
class BookStore:
    orders: dict[str, LimitOrder] = field(default_factory=dict)  # by order id
    by_hash: dict[tuple[int, bytes], str] = field(
        default_factory=dict
    )  # (chain, order hash) -> id: re-submits and fills (the hash holds no chain id)
    by_nonce: dict[NonceKey, str] = field(default_factory=dict)  # newest order using the nonce
    by_wallet: dict[tuple[int, str], list[str]] = field(
        default_factory=dict
    )  # (chain, maker lowercase) -> ids, oldest first
    resting: dict[DirectionKey, list[str]] = field(
        default_factory=dict
    )  # direction -> ids that may still rest (dead ones pruned by the sweep)
    holds: dict[tuple[int, bytes], SwapHold] = field(
        default_factory=dict
    )  # (chain, order hash) -> the swap reserving it
    versions: dict[int, int] = field(default_factory=dict)  # per chain: +1 when an order joins
    epoch: int = 0  # +1 on any change that can change what is offered (cached offers key on it)
    sequence: int = 0  # last creation sequence handed out (time priority)
    sweep: SweepState = field(default_factory=SweepState)  # the sweep's progress (/_sim/book)

    def touch(self) -> None:
        """Something offered may have changed: an order joined, filled, was cancelled or
        superseded, or a hold was taken or released."""
        self.epoch += 1

    def next_sequence(self) -> int:
        self.sequence += 1
        return self.sequence

    def add(self, order: LimitOrder) -> None:
        maker = order.maker.lower()
        self.orders[order.order_id] = order
        self.by_hash[(order.chain_id, order.order_hash)] = order.order_id
        self.by_nonce[(order.chain_id, maker, order.nonce)] = order.order_id
        self.by_wallet.setdefault((order.chain_id, maker), []).append(order.order_id)
        key = (order.chain_id, order.sell_token.lower(), order.buy_token.lower())
        self.resting.setdefault(key, []).append(order.order_id)
        self.versions[order.chain_id] = self.versions.get(order.chain_id, 0) + 1
        self.touch()

    def by_order_hash(self, chain_id: int, order_hash: bytes) -> LimitOrder | None:
        order_id = self.by_hash.get((chain_id, order_hash))
        return self.orders.get(order_id) if order_id is not None else None

    def nonce_holder(self, chain_id: int, maker: str, nonce: int) -> LimitOrder | None:
        order_id = self.by_nonce.get((chain_id, maker.lower(), nonce))
        return self.orders.get(order_id) if order_id is not None else None

    def of_wallet(self, chain_id: int, maker: str) -> list[LimitOrder]:
        """Newest first."""
        ids = self.by_wallet.get((chain_id, maker.lower()), [])
        return [self.orders[i] for i in reversed(ids)]

    def direction(self, chain_id: int, sell_token: str, buy_token: str) -> list[LimitOrder]:
        """Orders selling `sell_token` for `buy_token` that may still rest, oldest first."""
        ids = self.resting.get((chain_id, sell_token.lower(), buy_token.lower()), [])
        return [self.orders[i] for i in ids]

    def on_chain(self, chain_id: int) -> Iterator[LimitOrder]:
        """Every order that may still rest on the chain."""
        for (chain, _, _), ids in self.resting.items():
            if chain == chain_id:
                yield from (self.orders[i] for i in ids)

    def version(self, chain_id: int) -> int:
        return self.versions.get(chain_id, 0)

    def prune(self, now: float) -> None:
        """Drop orders that can no longer rest from the direction lists (the records stay)."""
        for key, ids in list(self.resting.items()):
            kept = [i for i in ids if self.orders[i].live_at(now)]
            if kept:
                self.resting[key] = kept
            else:
                del self.resting[key]
        for held_key, hold in list(self.holds.items()):
            if hold.until <= now:
                del self.holds[held_key]

    def held(self, chain_id: int, order_hash: bytes, now: float) -> str | None:
        """The swap reserving the order now, if any."""
        hold = self.holds.get((chain_id, order_hash))
        return hold.swap_id if hold is not None and hold.until > now else None


class BookStoreSaved(StateSchema):
    """What reset and snapshots put back of the book's store: all of it."""

    orders: dict[str, LimitOrder]
    by_hash: Annotated[dict[tuple[int, bytes], str], AsPairs()]
    by_nonce: Annotated[dict[NonceKey, str], AsPairs()]
    by_wallet: Annotated[dict[tuple[int, str], list[str]], AsPairs()]
    resting: Annotated[dict[DirectionKey, list[str]], AsPairs()]
    holds: Annotated[dict[tuple[int, bytes], SwapHold], AsPairs()]
    versions: dict[int, int]
    epoch: int
    sequence: int
    sweep: SweepState
