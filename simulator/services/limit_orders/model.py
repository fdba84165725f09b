"""Resting maker orders (v1 limit orders): the record as stored, its live status and the two
pricing frames of spec 3 (book rate and maker-frame execution rate).

A limit order is an `RfqOrder` over our reactor with taker = zero address (anyone fills): the
maker gives `inputToken` (the order's sellToken) and receives `outputToken` (its buyToken);
whoever fills it pays `outputAmount` to the maker and the fee on top to the fee recipient."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from contracts.orders import RfqOrder
from simulator.services.shared.amounts import rate_ray
from simulator.services.shared.fills import Fill

LimitOrderStatus = Literal["ACTIVE", "FILLED", "CANCELLED", "EXPIRED", "SUPERSEDED"]
LIMIT_ORDER_STATUSES: tuple[LimitOrderStatus, ...] = (
    "ACTIVE",
    "FILLED",
    "CANCELLED",
    "EXPIRED",
    "SUPERSEDED",
)
NoticeType = Literal["limit_order.filled", "limit_order.expired", "limit_order.cancelled"]


def book_rate(sell_amount: int, sell_decimals: int, buy_amount: int, buy_decimals: int) -> int:
    """The book rate of an order selling `sell_amount` for `buy_amount`: sellToken per
    buyToken, decimal-normalised, RAY-scaled, rounded down. For a taker filling the order it is
    what it receives per unit it pays (before the fee)."""
    return rate_ray(buy_amount, buy_decimals, sell_amount, sell_decimals)


def execution_rate(sell_amount: int, sell_decimals: int, buy_amount: int, buy_decimals: int) -> int:
    """The maker frame: buyToken per sellToken, decimal-normalised, RAY-scaled, rounded down."""
    return rate_ray(sell_amount, sell_decimals, buy_amount, buy_decimals)


@dataclass
class LimitOrder:
    """One signed resting order as the book keeps it. The order's own terms never change;
    what changes is what the chain and the indexer have told us about it."""

    order_id: str  # lo_…: stable, returned again on a re-submit of the same signed order
    chain_id: int
    partner_id: str | None  # the submitting key's partner: it alone reads it and gets events
    order: RfqOrder  # exactly as signed (taker zero, fee derived from the corridor)
    signature: bytes  # the maker's Permit2 signature over `order`
    order_hash: bytes  # EIP-712 struct hash: the Fill event's orderHash
    sell_decimals: int  # decimals of inputToken
    buy_decimals: int  # decimals of outputToken
    created_at: float  # simulator time of the first accepted submit
    sequence: int  # creation order: time priority inside one price level
    superseded: bool = False  # a newer order of the maker reused this nonce (terminal)
    cancelled_at: float | None = None  # nonce seen spent with no fill indexed (provisional)
    fill: Fill | None = None  # the reconciled settlement; FILLED from then on
    notified: set[NoticeType] = field(default_factory=set)  # events already published

    @property
    def maker(self) -> str:
        return self.order.maker

    @property
    def sell_token(self) -> str:
        return self.order.inputToken

    @property
    def sell_amount(self) -> int:
        return self.order.inputAmount

    @property
    def buy_token(self) -> str:
        return self.order.outputToken

    @property
    def buy_amount(self) -> int:
        return self.order.outputAmount

    @property
    def fee_amount(self) -> int:
        return self.order.feeAmount

    @property
    def nonce(self) -> int:
        return self.order.nonce

    @property
    def deadline(self) -> int:
        return self.order.deadline

    @property
    def tx_hash(self) -> str | None:
        """The settling transaction, once a fill is reconciled."""
        return self.fill.tx_hash if self.fill is not None else None

    @property
    def filled_at(self) -> float | None:
        """The settling block's time, once a fill is reconciled."""
        return self.fill.block_time if self.fill is not None else None

    @property
    def taker_pays(self) -> int:
        """What leaves whoever fills it: the maker's output plus the fee (buyToken)."""
        return self.order.outputAmount + self.order.feeAmount

    # The terms never change, so the rates and keys are computed once (the matcher reads them
    # for every order of a direction on every request).
    @cached_property
    def rate_ray(self) -> int:
        return book_rate(self.sell_amount, self.sell_decimals, self.buy_amount, self.buy_decimals)

    @cached_property
    def maker_key(self) -> str:
        """The maker, lowercase (the key of funding and nonce lookups)."""
        return self.order.maker.lower()

    @cached_property
    def sell_key(self) -> str:
        """The token it sells, lowercase."""
        return self.order.inputToken.lower()

    @cached_property
    def execution_rate_ray(self) -> int:
        return execution_rate(
            self.sell_amount, self.sell_decimals, self.buy_amount, self.buy_decimals
        )

    def live_at(self, now: float) -> bool:
        """Could still settle on chain now, as far as storage knows (deadline, nonce, fill)."""
        return (
            self.fill is None
            and not self.superseded
            and self.cancelled_at is None
            and now <= self.deadline
        )


@dataclass(frozen=True)
class DerivedStatus:
    status: LimitOrderStatus
    verified: bool  # False when the status could not be checked against the on-chain nonce


def derive_status(order: LimitOrder, now: float, nonce_spent: bool | None) -> DerivedStatus:
    """Spec 3 "Limit order status", computed at read time. `nonce_spent` is the Permit2 nonce
    as the chain shows it now (None: the chain could not be read).

    - a reconciled fill is a fact: FILLED (it supersedes an earlier CANCELLED);
    - SUPERSEDED (decisions: a newer order of the maker took the nonce) is terminal;
    - a spent nonce without a fill reads CANCELLED, provisional until a fill reconciles; once
      seen it is stored, so it needs no chain read to be shown (statusVerified true);
    - past the deadline: EXPIRED (statusVerified false when the nonce could not be read, since a
      fill may still be waiting to be indexed);
    - otherwise ACTIVE (statusVerified false when the chain could not be read)."""
    if order.fill is not None:
        return DerivedStatus("FILLED", True)
    if order.superseded:
        return DerivedStatus("SUPERSEDED", True)
    if order.cancelled_at is not None or nonce_spent:
        return DerivedStatus("CANCELLED", True)
    verified = nonce_spent is not None
    if now > order.deadline:
        return DerivedStatus("EXPIRED", verified)
    return DerivedStatus("ACTIVE", verified)
