"""Wire shapes of the v1 taker side (spec 3 "Create-swap request", "Order-book semantics", the
swap endpoints): the quote, the order book, the swap record and its page are designed here once
(spec: not shown; docs/decisions.md "v1 book") and are the v1 OpenAPI description."""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import ConfigDict, Field

from simulator.api.http.fields import (
    Address,
    Amount,
    Integer,
    NonZeroAmount,
    TxHash,
    WalletList,
)
from simulator.api.http.schemas import ApiModel
from simulator.api.rfq.schemas import Transactions

SwapStatus = Literal["QUOTED", "SUBMITTED", "FILLED", "EXPIRED", "CANCELLED"]
_STEERING = ("preferredLiquidityWallets", "restrictedLiquidityWallets")
_NON_EMPTY_WALLETS: dict[str, Any] = {
    "anyOf": [{"type": "array", "minItems": 1}, {"type": "string"}]
}


def _no_steering_conflict(schema: dict[str, Any]) -> None:
    # "They must not be combined": declared as well as enforced (an empty list steers nothing).
    schema.update(
        copy.deepcopy(
            {
                "not": {
                    "required": list(_STEERING),
                    "properties": dict.fromkeys(_STEERING, _NON_EMPTY_WALLETS),
                }
            }
        )
    )


class Steered(ApiModel):
    preferred_liquidity_wallets: WalletList | None = Field(
        default=None, description="Maker wallets whose orders come first, max 10"
    )
    restricted_liquidity_wallets: WalletList | None = Field(
        default=None, description="Only these makers' orders, no fallback, max 10"
    )


# -- GET /v1/order-book --------------------------------------------------------------------


class OrderBookQuery(Steered):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_no_steering_conflict)

    chain_id: int = Field(ge=1, le=2**53)
    sell_token: Address = Field(description="The asset the taker sells")
    buy_token: Address = Field(description="The asset the taker receives")


class Offer(ApiModel):
    """One whole resting order as a taker sees it (its signed payload is not shown)."""

    maker: str
    sell_amount: str = Field(description="What the taker pays: the order's output plus the fee")
    buy_amount: str = Field(description="What the taker receives")
    fee_amount: str = Field(description="Reactor fee inside sellAmount")
    rate_ray: str = Field(
        description="The order's book rate: buyToken per sellToken of this direction, before the "
        "fee, RAY"
    )
    deadline: str


class OrderBookHead(ApiModel):
    chain_id: int
    sell_token: str
    buy_token: str
    block_number: int = Field(description="Chain block the offers were checked at")
    as_of: str
    sell_capacity: str = Field(description="What a taker could sell into every offer, fee included")
    buy_capacity: str = Field(description="What it would receive")


class OrderBook(OrderBookHead):
    offers: list[Offer] = Field(description="Best rate first, in matching order")


# -- GET /v1/quote -------------------------------------------------------------------------


class QuoteQuery(OrderBookQuery):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_no_steering_conflict)

    sell_amount: NonZeroAmount
    min_rate: Amount | None = Field(
        default=None, description="RAY: minimum debt-per-collateral (book) rate of every order"
    )


class SwapQuote(ApiModel):
    chain_id: int
    sell_token: str
    buy_token: str
    sell_amount: str = Field(description="As requested")
    fillable: bool
    reason: Literal["no_liquidity"] | None
    sold_amount: str = Field(description="What the composed orders take, fee included")
    buy_amount: str
    fee_amount: str
    rate_ray: str = Field(description="buyAmount per soldAmount (fee included), RAY")
    partial_fill: bool = Field(description="soldAmount is below sellAmount")
    allowance_target: str = Field(description="Approve the reactor for soldAmount")
    orders: list[Offer]
    block_number: int


# -- POST /v1/swaps and the swap record ----------------------------------------------------


class SwapCreateBody(Steered):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_no_steering_conflict)

    chain_id: Integer = Field(ge=1, le=2**53)
    sell_token: Address = Field(description="Collateral asset")
    buy_token: Address = Field(description="Debt asset")
    sell_amount: NonZeroAmount
    min_rate: Amount | None = Field(
        default=None, description="RAY: minimum debt-per-collateral (book) rate of every order"
    )
    taker: Address = Field(description="Wallet that signs and receives proceeds")
    require_full_fill: bool = Field(
        default=False, description="Fill-or-kill: fillable false (partial_fill) unless exact"
    )


class Swap(ApiModel):
    id: str
    status: SwapStatus
    chain_id: int
    sell_token: str
    buy_token: str
    taker: str
    sell_amount: str = Field(description="As requested")
    sold_amount: str = Field(description="What the composed orders take, fee included")
    buy_amount: str = Field(description="What the orders pay the taker")
    fee_amount: str
    rate_ray: str = Field(description="buyAmount per soldAmount, RAY")
    min_rate: str | None
    require_full_fill: bool
    partial_fill: bool
    orders: list[Offer]
    allowance_target: str
    transactions: Transactions = Field(description="approval, then swap: one executeBatch")
    expires_at: str = Field(description="Execute before this; the orders are held until then")
    cancel_reason: Literal["order_filled_elsewhere", "order_cancelled", "maker_unfunded"] | None
    tx_hash: str | None
    submitted_at: str | None
    filled_at: str | None
    proceeds: str | None = Field(description="Settled buy amount, once FILLED")
    effective_rate_ray: str | None = Field(description="Settled rate, once FILLED")
    created_at: str


class SwapNotFillable(ApiModel):
    """Nothing to build now (HTTP 200): retry later, or with the available size."""

    fillable: Literal[False]
    reason: Literal["no_liquidity", "partial_fill"]
    sell_amount: str
    available_sell_amount: str = Field(description="What whole orders could compose now")
    available_buy_amount: str


class SwapListQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    status: SwapStatus | None = None
    cursor: str | None = Field(default=None, max_length=200, description="Opaque; from nextCursor")
    limit: int = Field(default=50, ge=1, le=200)


class SwapPage(ApiModel):
    data: list[Swap] = Field(description="Newest first")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null at the end")


class SwapSubmitBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tx_hash: TxHash
