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
    AmountText,
    Integer,
    NonZeroAmount,
    Timestamp,
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

    # Rendered from the book's order, whose sides are the maker's: the taker pays what the
    # maker receives (plus the fee) and receives what the maker sells.
    maker: str
    sell_amount: AmountText = Field(
        validation_alias="taker_pays",
        description="What the taker pays: the order's output plus the fee",
    )
    buy_amount: AmountText = Field(
        validation_alias="sell_amount", description="What the taker receives"
    )
    fee_amount: AmountText = Field(description="Reactor fee inside sellAmount")
    rate_ray: AmountText = Field(
        description="The order's book rate: buyToken per sellToken of this direction, before the "
        "fee, RAY"
    )
    deadline: Timestamp


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
    sell_amount: AmountText = Field(description="As requested")
    fillable: bool
    reason: Literal["no_liquidity"] | None
    sold_amount: AmountText = Field(description="What the composed orders take, fee included")
    buy_amount: AmountText
    fee_amount: AmountText
    rate_ray: AmountText = Field(description="buyAmount per soldAmount (fee included), RAY")
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
    id: str = Field(validation_alias="swap_id")
    status: SwapStatus
    chain_id: int
    sell_token: str
    buy_token: str
    taker: str
    sell_amount: AmountText = Field(description="As requested")
    sold_amount: AmountText = Field(
        validation_alias="sold", description="What the composed orders take, fee included"
    )
    buy_amount: AmountText = Field(
        validation_alias="proceeds", description="What the orders pay the taker"
    )
    fee_amount: AmountText = Field(validation_alias="fee")
    rate_ray: AmountText = Field(description="buyAmount per soldAmount, RAY")
    min_rate: AmountText | None
    require_full_fill: bool
    partial_fill: bool
    orders: list[Offer]
    allowance_target: str = Field(validation_alias="reactor")
    transactions: Transactions = Field(description="approval, then swap: one executeBatch")
    expires_at: Timestamp = Field(description="Execute before this; the orders are held until then")
    cancel_reason: Literal["order_filled_elsewhere", "order_cancelled", "maker_unfunded"] | None
    tx_hash: str | None
    submitted_at: Timestamp | None
    filled_at: Timestamp | None
    proceeds: AmountText | None = Field(
        validation_alias="settled_proceeds", description="Settled buy amount, once FILLED"
    )
    effective_rate_ray: AmountText | None = Field(description="Settled rate, once FILLED")
    created_at: Timestamp


# -- swap.filled (spec 3 "Events"); not in the OpenAPI documents ---------------------------------
# Rendered from the record with the field types of Swap above (api/swaps/events.py).


class SwapEventSwap(ApiModel):
    id: str = Field(validation_alias="swap_id")
    chain_id: int
    tx_hash: str | None
    sold_amount: AmountText = Field(validation_alias="settled_sold")
    proceeds: AmountText = Field(validation_alias="settled_proceeds")
    effective_rate_ray: AmountText
    orders_filled: int
    filled_at: Timestamp | None


class SwapEventData(ApiModel):
    swap: SwapEventSwap


class SwapFilledEvent(ApiModel):
    id: str
    type: Literal["swap.filled"]
    created: Timestamp
    data: SwapEventData


class SwapNotFillable(ApiModel):
    """Nothing to build now (HTTP 200): retry later, or with the available size."""

    fillable: Literal[False]
    reason: Literal["no_liquidity", "partial_fill"]
    sell_amount: AmountText
    available_sell_amount: AmountText = Field(description="What whole orders could compose now")
    available_buy_amount: AmountText


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
