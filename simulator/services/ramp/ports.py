"""What the ramp services need from a licensed provider, and the customer records the ramp keeps.

`RampProvider` is implemented over HTTP by `simulator/adapters/ramp/provider_client.py` (against the
provider sandbox, docs/provider-sandbox.md) and by fakes in unit tests. Every method raises
`ProviderUnreachable` when the provider cannot be reached or answers 5xx, `ProviderRefused` when
it declines (its sentence is shown to the user), `ProviderNotFound` for an unknown resource and
`ProviderInvalid` when it rejects our request as malformed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

Side = Literal["buy", "sell"]


class ProviderError(Exception):
    """Base of every provider failure; `message` is the provider's own sentence when it gave one."""

    def __init__(self, message: str = "") -> None:
        self.message = message
        super().__init__(message)


class ProviderUnreachable(ProviderError):
    """Transport failure, timeout or 5xx: the answer is unknown (spec: 502 upstream_error)."""


class ProviderRefused(ProviderError):
    """The provider declined (spec: 422 provider_refused with its sentence)."""


class ProviderNotFound(ProviderError):
    """The provider has no such customer, transfer or bank."""


class ProviderInvalid(ProviderError):
    """The provider rejected our request as malformed."""


class ProviderConflict(ProviderError):
    """A transfer with this reference already exists at the provider."""

    def __init__(
        self,
        message: str = "",
        existing: ProviderTransfer | None = None,
        existing_customer_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.existing = existing
        self.existing_customer_id = existing_customer_id  # a customer with this reference


@dataclass(frozen=True)
class Capabilities:
    """The provider's live switches (GET /api/v1/capabilities)."""

    provider: str
    display_name: str
    fiat: str
    token: str
    chains: tuple[int, ...]  # live account chains switched on now
    sandbox_chains: tuple[int, ...]  # chains the provider's test account supports
    sides: tuple[Side, ...]  # sides switched on
    enabled: bool  # provider switched on at all
    requires_customer_details: bool
    requires_payout_bank_account: bool
    requires_destination_wallet: bool
    max_buy_amount: str  # published single-deposit cap, decimal string
    max_buy_currency: str
    business_profile_sells: bool = True  # sells without a personal profile run on our business one

    @property
    def requires(self) -> Requirements:
        """What a transfer needs from the caller (the catalog's `requires` block)."""
        return Requirements(
            customer_details=self.requires_customer_details,
            payout_bank_account=self.requires_payout_bank_account,
            destination_wallet=self.requires_destination_wallet,
        )


class Requirements(NamedTuple):
    customer_details: bool  # the user must be registered before a transfer
    payout_bank_account: bool  # a sell needs a bank account
    destination_wallet: bool  # a buy needs a destination wallet


@dataclass(frozen=True)
class Bank:
    code: str
    name: str


@dataclass(frozen=True)
class ProviderCustomer:
    id: str
    type: Literal["individual", "business"]


@dataclass(frozen=True)
class KycReview:
    """The provider's review of one person (its own words; services map them to spec states)."""

    status: str  # not_started, awaiting_review, approved, declined, expired
    reasons: tuple[str, ...]
    requirements_due: tuple[str, ...]
    level: str | None
    can_deposit: bool
    max_buy_amount: str
    max_buy_currency: str


@dataclass(frozen=True)
class ProviderQuote:
    quote_id: str
    side: Side
    source_amount: str  # decimal, source currency
    target_amount: str  # decimal, target currency, after the provider's fee
    rate: str
    fee: str
    rate_label: str
    fee_label: str
    expires_at: float  # unix seconds


@dataclass(frozen=True)
class ProviderRecipient:
    recipient_id: str
    bank_code: str
    bank_name: str
    account_number: str
    account_name: str


@dataclass(frozen=True)
class StatusChange:
    status: str  # provider word
    at: float  # unix seconds


@dataclass(frozen=True)
class ProviderTransfer:
    id: str
    reference: str  # our transfer id
    side: Side
    chain_id: int
    sandbox: bool
    fiat: str
    token: str
    source_amount: str
    target_amount: str
    rate_label: str
    fee_label: str
    status: str  # awaiting_funds, funds_received, funds_converted, outgoing_payment_sent,
    # completed, failed, refunded, cancelled
    status_history: tuple[StatusChange, ...]
    pay_in: dict[str, Any]  # the spec's payIn object, as the provider gives it
    pay_out: dict[str, Any]  # the spec's payOut object (buy: blockchain_hash once completed)
    customer_id: str | None  # None: our business profile
    recipient_id: str | None
    retry_of: str | None  # provider id of the transfer whose parked balance this one pays out
    expires_at: float
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class KycDocument:
    """What POST /customers/kyc forwards; images are base64 without any data: prefix. Never
    stored (spec: documents are forwarded and not kept)."""

    type: str  # passport, national-id, drivers-license
    number: str
    image_front: str
    selfie_image: str
    expiry_date: str | None = None  # yyyy-mm-dd
    image_back: str | None = None


@dataclass(frozen=True)
class Money:
    amount: str  # decimal string
    currency: str


@dataclass(frozen=True)
class ProviderBalance:
    available: str  # decimal string
    currency: str


@dataclass(frozen=True)
class CustomerAddress:
    line1: str
    city: str
    state: str
    postal_code: str
    line2: str | None = None


@dataclass(frozen=True)
class PersonDetails:
    """What a registration call carries. birth_date and address are forwarded, never stored."""

    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    phone: str | None = None
    birth_date: str | None = None  # dd-mm-yyyy
    address: CustomerAddress | None = None


class RampProvider(Protocol):
    provider_id: str

    async def capabilities(self) -> Capabilities: ...

    async def banks(self) -> list[Bank]: ...

    async def resolve_account(self, bank_code: str, account_number: str) -> str:
        """The account holder's name."""
        ...

    async def create_customer(
        self, *, reference: str, kind: Literal["individual", "business"], details: PersonDetails
    ) -> ProviderCustomer: ...

    async def update_customer(
        self, customer_id: str, details: PersonDetails
    ) -> ProviderCustomer: ...

    async def submit_kyc(self, customer_id: str, document: KycDocument) -> KycReview:
        """Forward the identity documents (images base64, any data: prefix already stripped)."""
        ...

    async def kyc_review(self, customer_id: str, fiat: str) -> KycReview: ...

    async def kyc_link(self, customer_id: str) -> str: ...

    async def balance(self, customer_id: str | None) -> ProviderBalance: ...

    async def quote(
        self, *, side: Side, fiat: str, token: str, chain_id: int, amount: str, sandbox: bool
    ) -> ProviderQuote: ...

    async def create_recipient(
        self, *, customer_id: str | None, bank_code: str, account_number: str, account_name: str
    ) -> ProviderRecipient: ...

    async def create_transfer(
        self,
        *,
        quote_id: str,
        reference: str,
        customer_id: str | None,
        chain_id: int,
        sandbox: bool,
        destination_address: str | None = None,  # buy
        recipient_id: str | None = None,  # sell
        refund_address: str | None = None,  # sell
    ) -> ProviderTransfer: ...

    async def transfer(self, transfer_id: str) -> ProviderTransfer: ...

    async def transfer_by_reference(self, reference: str) -> ProviderTransfer | None: ...

    async def retry_payout(self, transfer_id: str, *, reference: str) -> ProviderTransfer: ...


@dataclass
class CustomerRecord:
    """One wallet's record with one provider (services/ramp/customers.py owns these)."""

    provider: str
    wallet: str  # lowercase
    first_name: str | None = None  # stored details (spec: first name, last name, email, phone)
    last_name: str | None = None
    email: str | None = None
    phone: str | None = None
    provider_customer_id: str | None = None  # None: no provider profile (hasProviderCustomer false)
    rejection_reason: str | None = None  # why no profile was created, when it was not
    kyc: KycReview | None = None  # last review read from the provider (None before any review)
    kyc_read_at: float | None = None  # when `kyc` was last read from the provider (throttle)
    created_at: float = 0.0
    updated_at: float = 0.0
    id: str = ""  # our record id (`rcu_…`, the API's customer.id), set when the record is made


class CustomerDirectory(Protocol):
    """Read access to customer records for the transfer services."""

    def record(self, provider: str, wallet: str) -> CustomerRecord | None: ...

    async def current_kyc(self, record: CustomerRecord, fiat: str) -> KycReview | None:
        """A fresh provider read of the review (no throttle), stored on the record. None when
        the record has no provider profile. Raises the service's UpstreamError when the
        provider cannot be reached."""
        ...

    async def refresh_pending(self) -> int:
        """Background re-read of every pending review last read longer ago than the kyc/status
        throttle (the sweep calls this); returns how many were read."""
        ...


class SandboxControls(Protocol):
    """The provider sandbox's `/sandbox` control API (docs/provider-sandbox.md), which a real
    provider does not have; `/_sim/ramp` forwards to it. The provider's HTTP client implements
    it next to `RampProvider`."""

    provider_id: str

    async def control(
        self, method: str, path: str, body: Any = None
    ) -> tuple[int, dict[str, Any] | None]:
        """One control call: the HTTP status and the JSON answer. Raises ProviderError when the
        sandbox cannot be reached."""
        ...

    async def transfer_by_reference(self, reference: str) -> ProviderTransfer | None:
        """The provider's transfer whose `reference` (our transfer id) is `reference`."""
        ...
