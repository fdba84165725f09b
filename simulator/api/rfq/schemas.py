"""Wire shapes of the v2 RFQ API (spec 1-rfq-v2 "Resources and their fields")."""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel

from simulator.api.http.fields import (
    Address,
    Amount,
    Bytes32,
    HexBytes,
    Integer,
    TxHash,
    WalletList,
)
from simulator.api.http.schemas import ApiModel


class TakerProofBody(ApiModel):
    nonce: Bytes32 = Field(description="32 random bytes")
    issuedAt: Integer = Field(ge=0, le=2**63 - 1, description="Unix milliseconds")
    signature: HexBytes = Field(description="EIP-712 TakerControl signature by the taker")


def _present(field: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": [field], "properties": {field: schema}}


_STEERING = ("preferredLiquidityWallets", "restrictedLiquidityWallets")
_NON_EMPTY_WALLETS: dict[str, Any] = {
    "anyOf": [{"type": "array", "minItems": 1}, {"type": "string"}]
}
# Cross-field rules of spec 1-rfq-v2 "Request body", declared in the document so that a body the
# document calls valid is one the service accepts ("Sending both or neither of sellAmount /
# buyAmount is 400"; "both steering fields together is 400"). The service enforces them (400
# with details.reason exactly_one_amount / steering_conflict); null counts as absent, as there.
# An empty steering list steers nothing, so only two non-empty lists conflict (a string form
# always names at least one wallet).
BODY_RULES: dict[str, Any] = {
    "oneOf": [
        _present("sellAmount", {"type": "string"}),
        _present("buyAmount", {"type": "string"}),
    ],
    "not": {
        "required": list(_STEERING),
        "properties": dict.fromkeys(_STEERING, _NON_EMPTY_WALLETS),
    },
}


def _body_rules(schema: dict[str, Any]) -> None:
    schema.update(copy.deepcopy(BODY_RULES))


class PreviewBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_body_rules)

    chainId: Integer = Field(ge=1, le=2**53)
    sellToken: Address
    buyToken: Address
    sellAmount: Amount | None = Field(
        default=None, description="Exact input (gross, fee-inclusive)"
    )
    buyAmount: Amount | None = Field(default=None, description="Exact output")
    preferredLiquidityWallets: WalletList | None = None
    restrictedLiquidityWallets: WalletList | None = None


class RfqRequestBody(PreviewBody):
    taker: Address = Field(description="Wallet that signs and broadcasts; the quote is bound to it")
    takerProof: TakerProofBody | None = Field(
        default=None, description="Keyless callers, first firm request; ignored with a key"
    )


class Routing(ApiModel):
    preferenceApplied: bool
    restrictionApplied: bool
    fallbackUsed: bool
    targetMakerWallets: list[str]
    preferredQuotesReceived: int
    openMarketQuotesReceived: int


class UnsignedTransaction(ApiModel):
    to: str
    data: str
    value: Literal["0"] = "0"
    chainId: int


class Transactions(ApiModel):
    approval: UnsignedTransaction
    swap: UnsignedTransaction


class QuoteOrder(ApiModel):
    encodedOrder: str
    signature: str
    sellAmount: str
    buyAmount: str
    feeAmount: str
    maker: str


class Quote(ApiModel):
    sellAmount: str
    buyAmount: str
    feeAmount: str
    takerPays: str
    rateRay: str
    expiresAt: str
    orderDeadline: str
    latestOrderDeadline: str
    reactor: str
    spender: str
    taker: str
    encodedOrder: str
    signature: str
    orders: list[QuoteOrder]


class FirmQuote(ApiModel):
    rfqId: str
    claimToken: str
    status: Literal["quoted"]
    quote: Quote
    transactions: Transactions
    routing: Routing


NoQuoteReason = Literal["no_makers_online", "no_restricted_liquidity", "no_valid_quote"]


class NoQuote(ApiModel):
    rfqId: str
    claimToken: str
    status: Literal["no_quote"]
    reason: NoQuoteReason
    availableSellAmount: str | None = None
    availableBuyAmount: str | None = None
    routing: Routing
    reservedUntil: str | None = None
    retryAfterMs: int | None = None


class RfqRequestResult(RootModel[Annotated[FirmQuote | NoQuote, Field(discriminator="status")]]):
    """A firm quote or a no-quote, both HTTP 200: branch on `status`."""


class RfqRecord(ApiModel):
    rfqId: str
    status: Literal["soliciting", "quoted", "no_quote", "submitted", "filled", "failed", "expired"]
    chainId: int
    sellToken: str
    buyToken: str
    sellAmount: str | None
    buyAmount: str | None
    feeAmount: str | None
    taker: str
    quoteTtlMs: int
    replyBy: str
    expiresAt: str | None
    noQuoteReason: str | None
    txHash: str | None
    submittedAt: str | None
    filledAt: str | None
    failReason: str | None
    routing: Routing
    createdAt: str


class CancelResult(ApiModel):
    rfqId: str
    status: Literal["released"]


class SubmitBody(ApiModel):
    txHash: TxHash


class LevelPoint(ApiModel):
    sellAmount: str
    buyAmount: str


class LadderPair(ApiModel):
    sellToken: str
    buyToken: str
    sellDecimals: int
    buyDecimals: int
    minSellAmount: str
    maxSellAmount: str
    levels: list[LevelPoint]


class Ladder(ApiModel):
    chainId: int
    asOf: str
    pairs: list[LadderPair]


class LevelsQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    chainId: int = Field(ge=1, le=2**53)


class Preview(ApiModel):
    status: Literal["preview"]
    sellAmount: str
    buyAmount: str
    feeAmount: str
    takerPays: str
    rateRay: str
    availableSellAmount: str | None = None
    routing: Routing
    reservedUntil: str | None = None
    retryAfterMs: int | None = None


class PreviewNoQuote(ApiModel):
    status: Literal["no_quote"]
    reason: NoQuoteReason
    availableSellAmount: str | None = None
    availableBuyAmount: str | None = None
    routing: Routing
    reservedUntil: str | None = None
    retryAfterMs: int | None = None


class PreviewResult(RootModel[Annotated[Preview | PreviewNoQuote, Field(discriminator="status")]]):
    """An indicative price or a no-quote, both HTTP 200."""
