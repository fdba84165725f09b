"""The matcher: which resting orders the book offers in one direction, in which order, and how an
instant swap composes whole orders from them. Pure functions over the orders and what the chain
showed (`LiveState`); no I/O.

Priority (docs/decisions.md "v1 book"): best book rate first, where rates within 1 bp of the
best rate of a level form one level and time priority (the order accepted first) decides inside
it; preferred makers' orders come before everyone else's; restricted steering keeps only the
listed makers. An order is offered only if it can settle now: not filled, cancelled, superseded
or past its deadline, not reserved by a built swap, its nonce unspent on chain, and its maker's
spendable balance (min of balance and allowance to the signature-transfer contract) covering it
together with every better-ranked offer of the same maker and token, so that the whole list can
be executed in one batch without a revert."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from simulator.services.limit_orders.model import LimitOrder
from simulator.services.shared.amounts import BPS

LEVEL_BPS = 1  # the instant matcher treats rates within 1 bp of a level's best as one level


class LiveState(Protocol):
    """What the chain showed at the view's block."""

    def spendable(self, token: str, maker: str) -> int | None:
        """min(balance, allowance to the signature-transfer contract); None when not read."""
        ...

    def spent(self, maker: str, nonce: int) -> bool | None:
        """Whether the Permit2 nonce is used; None when not read."""
        ...


@dataclass(frozen=True)
class Steering:
    preferred: tuple[str, ...] = ()  # lowercase maker wallets served first
    restricted: tuple[str, ...] = ()  # lowercase maker wallets served exclusively

    @classmethod
    def of(cls, preferred: Iterable[str] | None, restricted: Iterable[str] | None) -> Steering:
        def dedupe(wallets: Iterable[str] | None) -> tuple[str, ...]:
            return tuple(dict.fromkeys(w.lower() for w in wallets or ()))

        return cls(dedupe(preferred), dedupe(restricted))


NO_STEERING = Steering()


def priority(orders: Iterable[LimitOrder]) -> list[LimitOrder]:
    """Best book rate first; rates within LEVEL_BPS of a level's best rate are one level, in
    time priority."""
    ranked = sorted(orders, key=lambda o: (-o.rate_ray, o.sequence))
    out: list[LimitOrder] = []
    i = 0
    while i < len(ranked):
        top = ranked[i].rate_ray
        j = i + 1
        while j < len(ranked) and ranked[j].rate_ray * BPS >= top * (BPS - LEVEL_BPS):
            j += 1
        out.extend(sorted(ranked[i:j], key=lambda o: o.sequence))
        i = j
    return out


def offers(
    orders: Iterable[LimitOrder],
    state: LiveState,
    now: float,
    *,
    steering: Steering = NO_STEERING,
    min_rate: int | None = None,
    held: Callable[[bytes], bool] = lambda _: False,
) -> list[LimitOrder]:
    """The executable resting orders of one direction, in matching order (module docstring)."""
    candidates = [
        o
        for o in orders
        if o.live_at(now) and not held(o.order_hash) and state.spent(o.maker_key, o.nonce) is False
    ]
    if steering.restricted:
        allowed = set(steering.restricted)
        candidates = [o for o in candidates if o.maker_key in allowed]
    if min_rate is not None:
        candidates = [o for o in candidates if o.rate_ray >= min_rate]
    ranked = priority(candidates)
    if steering.preferred:
        first = set(steering.preferred)
        ranked = [o for o in ranked if o.maker_key in first] + [
            o for o in ranked if o.maker_key not in first
        ]
    used: dict[tuple[str, str], int] = {}
    out: list[LimitOrder] = []
    for order in ranked:
        key = (order.sell_key, order.maker_key)
        available = state.spendable(order.sell_key, order.maker_key)
        if available is None:
            continue
        if used.get(key, 0) + order.sell_amount <= available:
            used[key] = used.get(key, 0) + order.sell_amount
            out.append(order)
    return out


def compose(ranked: Sequence[LimitOrder], sell_amount: int) -> list[LimitOrder]:
    """Whole orders in matching order whose cost to the taker (output plus fee) fits in
    `sell_amount`; an order that does not fit what is left is skipped, a smaller one after it
    may still fit."""
    remaining = sell_amount
    chosen: list[LimitOrder] = []
    for order in ranked:
        if remaining <= 0:
            break
        if order.taker_pays <= remaining:
            chosen.append(order)
            remaining -= order.taker_pays
    return chosen


def reaching(
    ranked: Sequence[LimitOrder], *, cost: int | None = None, proceeds: int | None = None
) -> list[LimitOrder]:
    """The shortest prefix of whole offers, in matching order, whose cost to the taker reaches
    `cost` (or whose proceeds reach `proceeds`): the last order may carry it past, since orders
    fill whole; every offer when together they fall short. A swap of exactly its cost composes
    exactly this prefix (`compose`), so its price is one the book clears now (the rates feed's
    bid and ask for BOOK corridors, decisions RF21)."""
    if (cost is None) == (proceeds is None):
        raise ValueError("give exactly one of cost and proceeds")
    target = cost if cost is not None else proceeds
    assert target is not None
    taken = 0
    prefix: list[LimitOrder] = []
    for order in ranked:
        if taken >= target:
            break
        prefix.append(order)
        taken += order.taker_pays if cost is not None else order.sell_amount
    return prefix


@dataclass(frozen=True)
class Composition:
    orders: tuple[LimitOrder, ...]

    @property
    def sold(self) -> int:
        """What leaves the taker: every order's output plus its fee."""
        return sum(o.taker_pays for o in self.orders)

    @property
    def proceeds(self) -> int:
        return sum(o.sell_amount for o in self.orders)

    @property
    def fee(self) -> int:
        return sum(o.fee_amount for o in self.orders)


def capacity(ranked: Sequence[LimitOrder]) -> tuple[int, int]:
    """(sell, buy) capacity for a taker: what it could sell into the offers (costs incl. fee)
    and what it would receive."""
    return sum(o.taker_pays for o in ranked), sum(o.sell_amount for o in ranked)
