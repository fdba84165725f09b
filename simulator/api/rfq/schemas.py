"""Wire shapes of the v2 RFQ API (spec 1-rfq-v2 "Resources and their fields")."""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel

from simulator.api.http.fields import (
    Address,
    Amount,
    AmountText,
    Bytes32,
    HexBytes,
    HexText,
    Integer,
    Timestamp,
    TxHash,
    WalletList,
)
from simulator.api.http.schemas import ApiModel
from simulator.services.rfq.trades import TradeRequest


class TakerProofBody(ApiModel):
    nonce: Bytes32 = Field(description="32 random bytes")
    issued_at: Integer = Field(ge=0, le=2**63 - 1, description="Unix milliseconds")
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

    chain_id: Integer = Field(ge=1, le=2**53)
    sell_token: Address
    buy_token: Address
    sell_amount: Amount | None = Field(
        default=None, description="Exact input (gross, fee-inclusive)"
    )
    buy_amount: Amount | None = Field(default=None, description="Exact output")
    preferred_liquidity_wallets: WalletList | None = None
    restricted_liquidity_wallets: WalletList | None = None

    def trade(self) -> TradeRequest:
        """The trade asked for, as the service's rules take it: amounts in atomic units."""
        return TradeRequest(
            chain_id=self.chain_id,
            sell_token=self.sell_token,
            buy_token=self.buy_token,
            sell_amount=None if self.sell_amount is None else int(self.sell_amount),
            buy_amount=None if self.buy_amount is None else int(self.buy_amount),
            preferred=self.preferred_liquidity_wallets,
            restricted=self.restricted_liquidity_wallets,
        )


class RfqRequestBody(PreviewBody):
    taker: Address = Field(description="Wallet that signs and broadcasts; the quote is bound to it")
    taker_proof: TakerProofBody | None = Field(
        default=None, description="Keyless callers, first firm request; ignored with a key"
    )


class Routing(ApiModel):
    preference_applied: bool
    restriction_applied: bool
    fallback_used: bool
    target_maker_wallets: list[str]
    preferred_quotes_received: int
    open_market_quotes_received: int


class UnsignedTransaction(ApiModel):
    to: str
    data: HexText
    value: Literal["0"] = "0"
    chain_id: int


class Transactions(ApiModel):
    approval: UnsignedTransaction
    swap: UnsignedTransaction


class QuoteOrder(ApiModel):
    # Validated from the issued order (services/rfq/model.py FilledOrder).
    encoded_order: HexText
    signature: HexText
    sell_amount: AmountText = Field(validation_alias="taker_pays")
    buy_amount: AmountText = Field(validation_alias="maker_gives")
    fee_amount: AmountText
    maker: str


class Quote(ApiModel):
    # Validated from the quote as issued (services/rfq/model.py QuoteState).
    sell_amount: AmountText
    buy_amount: AmountText
    fee_amount: AmountText
    taker_pays: AmountText
    rate_ray: AmountText
    expires_at: Timestamp
    order_deadline: Timestamp
    latest_order_deadline: Timestamp
    reactor: str
    spender: str
    taker: str
    encoded_order: HexText
    signature: HexText
    orders: list[QuoteOrder]


# The answer to POST /v2/rfq/request is validated from the record, joined with what only the
# answer carries (the claim token, the transactions, the wait before a retry).
class FirmQuote(ApiModel):
    rfq_id: str
    claim_token: str
    status: Literal["quoted"]
    quote: Quote
    transactions: Transactions
    routing: Routing


NoQuoteReason = Literal["no_makers_online", "no_restricted_liquidity", "no_valid_quote"]


class NoQuote(ApiModel):
    rfq_id: str
    claim_token: str
    status: Literal["no_quote"]
    reason: NoQuoteReason = Field(validation_alias="no_quote_reason")
    available_sell_amount: AmountText | None = Field(None, validation_alias="available_sell")
    available_buy_amount: AmountText | None = Field(None, validation_alias="available_buy")
    routing: Routing
    reserved_until: Timestamp | None = None
    retry_after_ms: int | None = None


class RfqRequestResult(RootModel[Annotated[FirmQuote | NoQuote, Field(discriminator="status")]]):
    """A firm quote or a no-quote, both HTTP 200: branch on `status`."""


class RfqRecord(ApiModel):
    rfq_id: str
    status: Literal["soliciting", "quoted", "no_quote", "submitted", "filled", "failed", "expired"]
    chain_id: int
    sell_token: str
    buy_token: str
    sell_amount: AmountText | None
    buy_amount: AmountText | None
    fee_amount: AmountText | None
    taker: str
    quote_ttl_ms: int
    reply_by: Timestamp
    expires_at: Timestamp | None
    no_quote_reason: str | None
    tx_hash: str | None
    submitted_at: Timestamp | None
    filled_at: Timestamp | None
    fail_reason: str | None
    routing: Routing
    created_at: Timestamp


# -- webhook events (spec 1-rfq-v2 "Events"); not in the OpenAPI documents ------------------------
# Rendered from the record with the field types of RfqRecord above (api/rfq/events.py).


class RfqEventRfq(ApiModel):
    id: str = Field(validation_alias="rfq_id")
    chain_id: int
    sell_token: str
    buy_token: str
    sell_amount: AmountText | None
    buy_amount: AmountText | None
    fee_amount: AmountText | None
    taker: str
    tx_hash: str | None
    filled_at: Timestamp | None
    fail_reason: str | None


class RfqFilledEventRfq(RfqEventRfq):
    late: bool
    supersedes: str | None
    previous_fail_reason: str | None


class RfqEventData(ApiModel):
    api_version: Literal[2] = 2
    rfq: RfqFilledEventRfq | RfqEventRfq  # the filled shape first: serialized as what it is


class RfqEvent(ApiModel):
    id: str
    type: Literal["rfq.filled", "rfq.failed", "rfq.expired"]
    created: Timestamp
    data: RfqEventData


class CancelResult(ApiModel):
    rfq_id: str
    status: Literal["released"]


class SubmitBody(ApiModel):
    tx_hash: TxHash


class LevelPoint(ApiModel):
    sell_amount: AmountText
    buy_amount: AmountText


class LadderPair(ApiModel):
    sell_token: str
    buy_token: str
    sell_decimals: int
    buy_decimals: int
    min_sell_amount: AmountText
    max_sell_amount: AmountText
    levels: list[LevelPoint]


class Ladder(ApiModel):
    chain_id: int
    as_of: Timestamp
    pairs: list[LadderPair]


class LevelsQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    chain_id: int = Field(ge=1, le=2**53)


# Validated from the service's answer (services/rfq/answers.py PreviewAnswer).
class Preview(ApiModel):
    status: Literal["preview"]
    sell_amount: AmountText
    buy_amount: AmountText
    fee_amount: AmountText
    taker_pays: AmountText
    rate_ray: AmountText
    available_sell_amount: AmountText | None = None
    routing: Routing
    reserved_until: Timestamp | None = None
    retry_after_ms: int | None = None


class PreviewNoQuote(ApiModel):
    status: Literal["no_quote"]
    reason: NoQuoteReason
    available_sell_amount: AmountText | None = None
    available_buy_amount: AmountText | None = None
    routing: Routing
    reserved_until: Timestamp | None = None
    retry_after_ms: int | None = None


class PreviewResult(RootModel[Annotated[Preview | PreviewNoQuote, Field(discriminator="status")]]):
    """An indicative price or a no-quote, both HTTP 200."""
