"""Wire shapes of the v2 ramp's transfers (spec 2-ramp-v2 "Transfer", "POST /v2/ramp/transfers",
"Reading"; docs/ramp.md). Bodies are not wrapped in `data`.

The field types shared by every ramp schema come from api/ramp/schemas.py."""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field

from simulator.api.http.fields import Timestamp, integral_number
from simulator.api.http.schemas import ApiModel, SnakeApiModel
from simulator.api.ramp.schemas import (
    ChainId,
    Currency,
    Email,
    PositiveAmount,
    ProviderId,
    RampProof,
    SandboxFlag,
    Side,
    TermsAccepted,
    Text,
    Wallet,
    WalletBody,
)
from simulator.services.ramp.model import TransferStatus

INTENT_KEY_PATTERN = r"^[A-Za-z0-9_-]{12,64}$"
IntentKey = Annotated[
    str,
    Field(
        pattern=INTENT_KEY_PATTERN,
        description="12 to 64 characters from A-Z a-z 0-9 _ -; one per transfer attempt",
    ),
]
TransferId = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_-]+$")]

# -- requests -------------------------------------------------------------------------------------


class PayoutBody(ApiModel):
    """A sell's payout: the account from the banks step (resolve gives accountName)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    bank_code: Annotated[str, Field(pattern=r"^[0-9A-Za-z]{2,10}$", description="From /banks")]
    account_number: Annotated[str, Field(pattern=r"^[0-9]{6,12}$", description="6 to 12 digits")]
    account_name: Text = Field(description="As /banks/resolve returned it")
    provider_recipient_id: TransferId | None = Field(
        default=None,
        description="Reuse the recipient registered before a quote_drift (copy it from the error)",
    )


# Cross-field rule of spec 2-ramp-v2 "POST /v2/ramp/transfers" declared in the document, so a
# body the document calls valid is one the service accepts: `payout` is for sells only and a
# sell needs one ("sell without payout" is 400); on a buy it is absent or null.
PAYOUT_BY_SIDE: dict[str, Any] = {
    "oneOf": [
        {"properties": {"side": {"const": "buy"}, "payout": {"type": "null"}}},
        {
            "required": ["payout"],
            "properties": {"side": {"const": "sell"}, "payout": {"type": "object"}},
        },
    ]
}


def _payout_by_side(schema: dict[str, Any]) -> None:
    schema.update(copy.deepcopy(PAYOUT_BY_SIDE))


class TransferBody(WalletBody):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_payout_by_side)

    side: Side
    fiat: Currency
    token: Currency
    amount: PositiveAmount = Field(description="Positive; fiat on a buy, token on a sell")
    intent_key: IntentKey
    email: Email | None = Field(
        default=None, description="Status emails go here; else the customer record's email"
    )
    accepted_terms: TermsAccepted | None = Field(
        default=None, description="true once the user accepted the provider's terms; false is 400"
    )
    expected_target_amount: PositiveAmount | None = Field(
        default=None,
        description="What the user was shown; more than 1% away stops the call (409 quote_drift)",
    )
    payout: PayoutBody | None = Field(default=None, description="Sell only (required there)")


class TransferQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    wallet: Wallet | None = Field(
        default=None, description="The wallet that made the transfer: the masked view"
    )


PageSize = Annotated[
    int, Field(ge=1, le=100, description="Page size"), BeforeValidator(integral_number)
]


class ListBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    wallet: Wallet
    first: PageSize = 20
    after: TransferId | None = Field(default=None, description="nextCursor of the previous page")


class RetryBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: ProviderId | None = Field(
        default=None, description="Optional; the transfer's provider when left out"
    )
    wallet: Wallet
    chain_id: ChainId
    proof: RampProof | None = Field(
        default=None, description="Required: a missing proof is 401 proof_of_control_required"
    )
    sandbox: SandboxFlag = False


class SupportBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    reference: TransferId = Field(description="Our transfer id or the providerTransferId")


# -- responses -----------------------------------------------------------------------------------


class _ProviderShape(ApiModel):
    # Rendered from the provider's objects: fields we do not know are dropped, not refused.
    model_config = ConfigDict(extra="ignore")


class _ProviderSnakeShape(SnakeApiModel):
    # As _ProviderShape, for the provider's objects whose wire names are snake_case.
    model_config = ConfigDict(extra="ignore")


class BankAccountDetails(_ProviderSnakeShape):
    bank_name: str
    account_number: str
    account_name: str


class BankPayIn(_ProviderSnakeShape):
    type: Literal["temporary_bank_account"]
    recipient_details: BankAccountDetails
    expires_at: str


class AddressPayIn(_ProviderShape):
    type: Literal["address"]
    address: str
    network: str


class BalancePayIn(_ProviderShape):
    """RA62: a payout retry pays from the provider's parked balance: nothing for the user to do."""

    type: Literal["balance"]


class AddressPayOut(_ProviderSnakeShape):
    type: Literal["address"]
    network: str
    address: str
    blockchain_hash: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The delivering transaction's hash, once COMPLETED",
    )


class BankPayOut(_ProviderShape):
    """RA20: a sell's payout account; the wallet view shows the last four digits only."""

    type: Literal["bank_account"]
    bank_code: str
    bank_name: str
    account_number: str
    account_name: str


PayIn = Annotated[BankPayIn | AddressPayIn | BalancePayIn, Field(discriminator="type")]
PayOut = Annotated[AddressPayOut | BankPayOut, Field(discriminator="type")]


class TimelineItem(ApiModel):
    status: TransferStatus
    provider_status: str
    at: Timestamp


class Transfer(ApiModel):
    id: str
    provider_transfer_id: str = Field(description="The provider's reference (receipts, support)")
    provider: str
    sandbox: bool
    side: Side
    fiat: str
    token: str
    chain_id: int
    source_amount: str = Field(description="Fiat on a buy, token on a sell")
    target_amount: str = Field(description="What the user receives, after the provider's fee")
    rate_label: str
    fee_label: str
    status: TransferStatus
    provider_status: str = Field(description="The provider's own word")
    retry_of_id: str | None = Field(description="The original transfer, on a payout retry")
    pay_in: PayIn = Field(description="What the user must do")
    pay_out: PayOut = Field(description="Where the result goes")
    has_email: bool = Field(description="Whether status emails will be sent")
    timeline: list[TimelineItem] = Field(description="Every change, oldest first")
    expires_at: Timestamp = Field(description="End of the payment window")
    created_at: Timestamp


class TransferCreated(ApiModel):
    transfer: Transfer
    claim_token: str = Field(
        description="X-Ramp-Claim for the full view; returned only here (fresh on each replay)"
    )


class TransferResult(ApiModel):
    transfer: Transfer


class TransferList(ApiModel):
    transfers: list[Transfer] = Field(description="Masked views, newest first")
    next_cursor: str | None = Field(description="`after` for the next page; null on the last")


class Money(ApiModel):
    amount: str
    currency: str


class Balance(ApiModel):
    available: str
    currency: str


class RetryEligibility(ApiModel):
    eligible: bool
    reason: Literal["not_stuck", "too_soon", "retry_in_flight", "no_profile", "no_destination"] | (
        None
    ) = Field(description="Why not eligible; null when eligible")
    stuck_since: Timestamp | None = Field(description="When providerStatus became funds_converted")
    stuck_for_ms: int
    wait_ms: int = Field(description="Until eligible on time alone")
    balance: Balance = Field(description="The customer's parked provider balance")
    required: Money = Field(description="The original targetAmount")
    covers: bool = Field(description="balance.available >= required.amount")


class WebhookAck(ApiModel):
    received: bool
    event_id: str
    outcome: str


# -- /_sim/outbox -----------------------------------------------------------------------------


class OutboxQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    to: Annotated[str, Field(min_length=1, max_length=254)] | None = None
    transfer_id: TransferId | None = None


class OutboxEmail(ApiModel):
    id: str
    to: str
    kind: Literal["instructions", "funds_received", "result"]
    transfer_id: str
    status: TransferStatus = Field(description="The transfer status the email reports")
    subject: str
    body: str
    at: Timestamp
    smtp: Literal["not_configured", "queued", "sent", "failed"]
    smtp_error: str | None


class OutboxList(ApiModel):
    emails: list[OutboxEmail]


class OutboxCleared(ApiModel):
    deleted: int
