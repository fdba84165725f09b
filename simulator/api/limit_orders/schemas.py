"""Wire shapes of the v1 limit orders (spec 3 "Limit order record", "Limit-order quote response",
"Limit-order prepare response", "POST /v1/limit-orders"). Shapes the spec leaves out are designed
here once (docs/decisions.md "v1 book") and are the v1 OpenAPI description."""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import AliasPath, BeforeValidator, ConfigDict, Field, RootModel

from simulator.api.http.fields import (
    Address,
    Amount,
    AmountText,
    HexBytes,
    HexText,
    Integer,
    NonZeroAmount,
    Timestamp,
    WalletList,
)
from simulator.api.http.schemas import ApiModel

MAX_UNIX_SECONDS = 2**63 - 1
UnixSecondsString = Annotated[
    str, Field(pattern=r"^(0|[1-9][0-9]{0,18})$", description="Unix seconds as a decimal string")
]
UnixSeconds = Annotated[
    Annotated[Integer, Field(ge=0, le=MAX_UNIX_SECONDS)] | UnixSecondsString,
    Field(description="Unix seconds: an integer or a decimal string"),
]
LimitOrderStatus = Literal["ACTIVE", "FILLED", "CANCELLED", "EXPIRED", "SUPERSEDED"]


def unix_seconds(value: int | str) -> int:
    return value if isinstance(value, int) else int(value)


# -- GET /v1/limit-orders/quote ----------------------------------------------------------


class LimitOrderQuoteQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    chain_id: int = Field(ge=1, le=2**53)
    sell_token: Address = Field(description="The asset the maker sells")
    buy_token: Address = Field(description="The asset the maker wants")
    sell_amount: NonZeroAmount
    margin_bps: int = Field(
        default=10,
        ge=0,
        le=1000,
        description="Profit conceded to the filling operator on top of the reactor fee",
    )
    preferred_liquidity_wallets: WalletList | None = None
    restricted_liquidity_wallets: WalletList | None = None


class Depth(ApiModel):
    makers: int = Field(description="Filling market makers bidding in this direction")
    total_capacity: AmountText = Field(description="Sum of their depths, in sellToken atomic units")
    max_maker_capacity: AmountText = Field(
        description="The largest single depth: the whole-order ceiling"
    )


class FastFill(ApiModel):
    # Validated from the service's priced fast-fill outcome: the price's fields and its depth.
    buy_amount: AmountText = Field(validation_alias=AliasPath("price", "buy_amount"))
    rate_ray: AmountText = Field(
        validation_alias=AliasPath("price", "rate_ray"),
        description="Maker frame: buyToken per sellToken, RAY",
    )
    margin_bps: int = Field(validation_alias=AliasPath("price", "margin_bps"))
    depth: Depth


class QueuePrice(ApiModel):
    buy_amount: AmountText
    rate_ray: AmountText = Field(description="Maker frame: RAY^2 / queueRate")


FastFillUnavailableReason = Literal[
    "no_market_maker_bids", "exceeds_max_maker_capacity", "below_min_buy_amount"
]


class LimitOrderQuote(ApiModel):
    sell_amount: AmountText
    min_buy_amount: AmountText = Field(description="Smallest output able to carry the reactor fee")
    fast_fill: FastFill | None
    fast_fill_unavailable_reason: FastFillUnavailableReason | None
    queue: QueuePrice | None
    depth: Depth = Field(
        description="The fastFill depth block, also when fastFill is null (advisory)"
    )


# -- POST /v1/limit-orders/prepare ---------------------------------------------------------


class PricingBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    mode: Literal["fastFill", "queue"] = Field(
        description="fastFill crosses the best filling bid; queue rests 2 bp above the best order"
    )
    margin_bps: Integer = Field(default=10, ge=0, le=1000)


def _one_price(schema: dict[str, Any]) -> None:
    # Exactly one of buyAmount or pricing, declared as well as enforced (null counts as absent).
    schema.update(
        copy.deepcopy(
            {
                "oneOf": [
                    {"required": ["buyAmount"], "properties": {"buyAmount": {"type": "string"}}},
                    {"required": ["pricing"], "properties": {"pricing": {"type": "object"}}},
                ]
            }
        )
    )


class PrepareBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_one_price)

    chain_id: Integer = Field(ge=1, le=2**53)
    maker: Address = Field(description="Signs the order and receives its proceeds")
    sell_token: Address
    sell_amount: NonZeroAmount
    buy_token: Address
    buy_amount: Amount | None = None
    pricing: PricingBody | None = None
    deadline: UnixSeconds = Field(description="Capped at about one year from now")


class TypedDataField(ApiModel):
    name: str
    type: str


class TypedDataDomain(ApiModel):
    name: Literal["Permit2"]
    chain_id: int
    verifying_contract: str = Field(description="The signature-transfer (Permit2) contract")


class TypedData(ApiModel):
    domain: TypedDataDomain
    types: dict[str, list[TypedDataField]]
    primary_type: Literal["PermitWitnessTransferFrom"]
    message: dict[str, Any]


class PreparedOrder(ApiModel):
    chain_id: int
    reactor: str
    maker: str
    input_token: str
    input_amount: AmountText
    output_token: str
    output_amount: AmountText
    nonce: AmountText
    deadline: AmountText = Field(description="Unix seconds")


class PricingBlock(ApiModel):
    mode: Literal["fastFill", "queue"]
    margin_bps: int
    assumed_rate_ray: AmountText = Field(description="Maker frame rate the buyAmount was priced at")
    depth: Depth = Field(description="Reference depth of the filling market makers")


class Prepared(ApiModel):
    typed_data: TypedData = Field(description="Sign with eth_signTypedData_v4")
    digest: HexText = Field(description="EIP-712 digest of typedData")
    encoded_order: HexText = Field(description="abi.encode(RfqOrder) as signed")
    order: PreparedOrder
    pricing: PricingBlock | None = Field(default=None, description="Only when pricing was used")


# -- POST /v1/limit-orders -----------------------------------------------------------------


class SignedOrderBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    chain_id: Integer = Field(ge=1, le=2**53)
    reactor: Address
    maker: Address
    input_token: Address
    input_amount: Amount
    output_token: Address
    output_amount: Amount
    nonce: Amount = Field(description="Permit2 nonce, as in the prepare response")
    deadline: UnixSeconds
    signature: HexBytes = Field(description="The maker's signature over the typed data")


class Placed(ApiModel):
    # Validated from the order and its status (DerivedStatus), which this answer writes in
    # lower case.
    id: str = Field(validation_alias="order_id")
    rate_ray: AmountText = Field(description="Book rate, sellToken per buyToken")
    status: Annotated[
        Literal["active", "filled", "cancelled", "expired", "superseded"],
        BeforeValidator(str.lower),
    ]


# -- records -------------------------------------------------------------------------------


class LimitOrderRecord(ApiModel):
    id: str = Field(validation_alias="order_id")
    chain_id: int
    maker: str
    sell_token: str
    sell_amount: AmountText
    buy_token: str
    buy_amount: AmountText
    rate_ray: AmountText = Field(description="Book rate, sellToken per buyToken, RAY")
    execution_rate_ray: AmountText = Field(description="Maker frame, buyToken per sellToken, RAY")
    nonce: AmountText
    deadline: Timestamp
    status: LimitOrderStatus
    status_verified: bool = Field(validation_alias="verified")  # of the read's DerivedStatus
    tx_hash: str | None
    filled_at: Timestamp | None
    created_at: Timestamp


# -- limit_order.* webhook events (spec 3 "Events"); not in the OpenAPI documents ----------------
# Rendered from the order with the field types of LimitOrderRecord above (api/limit_orders/
# events.py).


class LimitOrderEventOrder(ApiModel):
    id: str = Field(validation_alias="order_id")
    chain_id: int
    sell_token: str
    sell_amount: AmountText
    buy_token: str
    buy_amount: AmountText
    rate_ray: AmountText
    execution_rate_ray: AmountText
    deadline: Timestamp
    tx_hash: str | None
    filled_at: Timestamp | None


class LimitOrderEventData(ApiModel):
    limit_order: LimitOrderEventOrder


class LimitOrderEvent(ApiModel):
    id: str
    type: Literal["limit_order.filled", "limit_order.expired", "limit_order.cancelled"]
    created: Timestamp
    data: LimitOrderEventData


class LimitOrderList(RootModel[list[LimitOrderRecord]]):
    """The wallet's orders through this partner, newest first."""


class LimitOrderListQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    chain_id: int = Field(ge=1, le=2**53)
    wallet: Address = Field(description="The maker wallet")
    limit: int = Field(default=50, ge=1, le=200)
