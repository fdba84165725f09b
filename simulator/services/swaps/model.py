"""Instant swaps (spec 3 "Create-swap request", "Swap status"): the record of a swap composed of
whole resting orders, its statuses and transitions (docs/decisions.md "v1 book"), and the
unsigned transactions that execute it.

Transitions: QUOTED -> SUBMITTED (POST /submit) -> FILLED (every order's fill reconciled by the
indexer, with or without /submit); QUOTED or SUBMITTED -> EXPIRED at expiresAt without a fill;
QUOTED -> CANCELLED when an included order becomes unfillable (filled by someone else, its nonce
cancelled or superseded, its maker no longer funded) before anything was submitted. A fill is a
fact: one reconciled after EXPIRED or CANCELLED still makes the swap FILLED."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from contracts.orders import encode_order
from simulator.services.limit_orders.model import LimitOrder
from simulator.services.rfq.transactions import (
    EXECUTE_BATCH,
    TransactionPair,
    UnsignedTx,
    approval,
    encode_signed_orders,
)
from simulator.services.shared.amounts import rate_ray
from simulator.services.shared.fills import Fill

SwapStatus = Literal["QUOTED", "SUBMITTED", "FILLED", "EXPIRED", "CANCELLED"]
SWAP_STATUSES: tuple[SwapStatus, ...] = ("QUOTED", "SUBMITTED", "FILLED", "EXPIRED", "CANCELLED")
CancelReason = Literal["order_filled_elsewhere", "order_cancelled", "maker_unfunded"]
NotFillableReason = Literal["no_liquidity", "partial_fill"]


@dataclass
class SwapRecord:
    swap_id: str  # sw_…
    chain_id: int
    partner_id: str | None  # the creating key's partner: it alone reads it and gets swap.filled
    sequence: int  # creation order: pages are newest first by it
    sell_token: str  # what the taker sells (collateral), checksummed
    buy_token: str  # what the taker receives (debt), checksummed
    sell_decimals: int
    buy_decimals: int
    taker: str  # signs, sends the batch and receives the proceeds
    sell_amount: int  # as requested
    min_rate: int | None  # the request's minRate (book rate of every included order)
    require_full_fill: bool
    reactor: str  # allowance target and the batch's destination
    orders: tuple[LimitOrder, ...]  # whole resting orders, in matching order
    created_at: float
    expires_at: float  # the earliest included deadline, capped by the swap TTL
    status: SwapStatus = "QUOTED"
    cancel_reason: CancelReason | None = None
    tx_hash: str | None = None  # reported by /submit, or the fill's transaction
    submitted_at: float | None = None
    filled_at: float | None = None  # block time of the settling transaction
    fills: dict[bytes, Fill] = field(default_factory=dict)  # by order hash, by this taker

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

    @property
    def rate_ray(self) -> int:
        """buyToken per sellToken of the whole swap, fee included (debt per collateral)."""
        return rate_ray(self.sold, self.sell_decimals, self.proceeds, self.buy_decimals)

    @property
    def partial_fill(self) -> bool:
        """The composed orders take less than the request's sellAmount."""
        return self.sold < self.sell_amount

    @property
    def orders_filled(self) -> int:
        return len(self.fills)

    @property
    def transactions(self) -> TransactionPair:
        return TransactionPair(self.approval_tx(), self.batch_tx())

    @property
    def settled_sold(self) -> int | None:
        if self.status != "FILLED":
            return None
        return sum(f.output_amount + f.fee_amount for f in self.fills.values())

    @property
    def settled_proceeds(self) -> int | None:
        if self.status != "FILLED":
            return None
        return sum(f.input_amount for f in self.fills.values())

    @property
    def effective_rate_ray(self) -> int | None:
        sold, proceeds = self.settled_sold, self.settled_proceeds
        if sold is None or proceeds is None:
            return None
        return rate_ray(sold, self.sell_decimals, proceeds, self.buy_decimals)

    @property
    def open(self) -> bool:
        return self.status in ("QUOTED", "SUBMITTED")

    def approval_tx(self) -> UnsignedTx:
        """approve(reactor, soldAmount) on the sell token (a USDT-like token needs a zero
        allowance first when one is already set)."""
        return approval(self.chain_id, self.sell_token, self.reactor, self.sold)

    def batch_tx(self) -> UnsignedTx:
        """One executeBatch of every included order with its maker's signature."""
        signed = [(encode_order(o.order), o.signature) for o in self.orders]
        return UnsignedTx(self.reactor, EXECUTE_BATCH + encode_signed_orders(signed), self.chain_id)


@dataclass(frozen=True)
class NotFillable:
    """HTTP 200 "nothing to build": no liquidity, or a partial composition refused (the wire's
    names: api/swaps/schemas.py `SwapNotFillable` is validated from it)."""

    reason: NotFillableReason
    sell_amount: int  # as requested
    available_sell_amount: int  # what whole orders could compose now (taker cost, fee included)
    available_buy_amount: int  # and what it would receive
    fillable: Literal[False] = False
