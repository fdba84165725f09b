"""Wire shapes of the v2 RFQ API (spec 1-rfq-v2 "Resources and their fields")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, RootModel

from simulator.api.schemas.common import ApiModel
from simulator.api.schemas.fields import Address, Amount, Bytes32, HexBytes, TxHash, WalletList


class TakerProofBody(ApiModel):
    nonce: Bytes32 = Field(description="32 random bytes")
    issuedAt: int = Field(ge=0, le=2**63 - 1, description="Unix milliseconds")
    signature: HexBytes = Field(description="EIP-712 TakerControl signature by the taker")


class PreviewBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    chainId: int = Field(ge=1, le=2**53)
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
