"""Wire shapes of the v2 fiat ramp: discovery (providers, banks), customers and KYC
(spec 2-ramp-v2). The field types at the top are shared by every ramp schema (transfers too).

Ramp bodies are not wrapped in `data`. Patterns use [0-9], never \\d, and no
look-arounds, which the regex engines of many validators (RE2, Rust's regex) cannot run."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, StringConstraints

from simulator.api.http.fields import Address, Bytes32, HexBytes, integral_number
from simulator.api.http.schemas import ApiModel

# -- shared field types (ramp) -----------------------------------------------------------------

PROVIDER_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,39}$"
CURRENCY_PATTERN = r"^[A-Z][A-Z0-9]{1,9}$"
DECIMAL_PATTERN = r"^(0|[1-9][0-9]{0,29})(\.[0-9]{1,18})?$"  # RA12: human decimal strings
# RA12 for request amounts: greater than zero, at most 6 fraction digits (the most any ramp
# currency has: NGNS); a fraction of zeros only is not positive. No look-arounds (see above).
POSITIVE_DECIMAL_PATTERN = (
    r"^([1-9][0-9]{0,29}(\.[0-9]{1,6})?"
    r"|0\.([1-9][0-9]{0,5}|0[1-9][0-9]{0,4}|00[1-9][0-9]{0,3}|000[1-9][0-9]{0,2}"
    r"|0000[1-9][0-9]?|00000[1-9]))$"
)


ChainId = Annotated[
    int, Field(ge=1, le=2**53, description="Numeric EVM chain id"), BeforeValidator(integral_number)
]
UnixMillis = Annotated[
    int,
    Field(ge=0, le=2**63 - 1, description="Unix milliseconds"),
    BeforeValidator(integral_number),
]
ProviderId = Annotated[
    str, Field(pattern=PROVIDER_PATTERN, description="Provider id from GET /v2/ramp/providers")
]
Wallet = Annotated[
    Address, Field(description="EVM address (lowercase accepted; checksummed when mixed case)")
]
Currency = Annotated[
    str, Field(pattern=CURRENCY_PATTERN, description="Uppercase currency code (NGN, NGNS)")
]
PositiveAmount = Annotated[
    str,
    Field(
        pattern=POSITIVE_DECIMAL_PATTERN,
        description=(
            "Positive human decimal string in the currency's units (not atomic units), at most "
            "the currency's decimals (NGN 2, NGNS 6)"
        ),
    ),
]
DecimalAmount = Annotated[
    str,
    Field(
        pattern=DECIMAL_PATTERN,
        max_length=50,
        description="Human decimal string in the currency's units (not atomic units)",
    ),
]
Side = Literal["buy", "sell"]
SandboxFlag = Annotated[
    bool,
    Field(description="Use the provider's sandbox account (staging only; production answers 400)"),
]
KycStateName = Literal["unverified", "pending", "verified", "rejected", "expired"]


class RampProof(ApiModel):
    """The TakerControl proof of document 1: taker = the wallet, chainId = the body's chainId.
    Valid 60 s; the identical proof may be re-sent across details, kyc and transfer calls."""

    model_config = ConfigDict(extra="forbid", strict=True)

    nonce: Bytes32 = Field(description="32 random bytes")
    issued_at: UnixMillis
    signature: HexBytes = Field(description="EIP-712 TakerControl signature by the wallet")


class WalletBody(ApiModel):
    """What every wallet-naming ramp POST carries."""

    model_config = ConfigDict(extra="forbid", strict=True)

    provider: ProviderId
    wallet: Wallet
    chain_id: ChainId
    proof: RampProof | None = Field(
        default=None, description="Required: a missing proof is 401 proof_of_control_required"
    )
    sandbox: SandboxFlag = False


# -- providers and banks ---------------------------------------------------------------------


class ProvidersQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    fiat: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9]{1,9}$")] | None = None
    token: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9]{1,9}$")] | None = None
    chain_id: ChainId | None = None
    side: Side | None = None
    sandbox: SandboxFlag = False


class ProviderRequires(ApiModel):
    customer_details: bool = Field(description="User must be registered before a transfer")
    payout_bank_account: bool = Field(description="A sell needs a bank account")
    destination_wallet: bool = Field(description="A buy needs a destination wallet")


class RampProviderItem(ApiModel):
    provider: str = Field(description="Provider id, passed as `provider` on every other call")
    display_name: str
    fiat: str
    token: str
    chain_ids: list[int] = Field(
        validation_alias="chains", description="Chains it can settle on now (live switches)"
    )
    sandbox_chain_ids: list[int] = Field(
        validation_alias="sandbox_chains",
        description="Chains of its test account; empty in production",
    )
    sides: list[Side] = Field(description="Sides switched on")
    requires: ProviderRequires


class ProvidersList(ApiModel):
    providers: list[RampProviderItem] = Field(
        description="Empty when nobody can run the corridor now (switched off or unreachable)"
    )


class BanksQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    provider: ProviderId
    sandbox: SandboxFlag = False


class BankItem(ApiModel):
    code: str
    name: str


class BankList(ApiModel):
    banks: list[BankItem]


class ResolveBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: ProviderId
    bank_code: Annotated[str, Field(pattern=r"^[0-9A-Za-z]{2,10}$", description="From /banks")]
    account_number: Annotated[str, Field(pattern=r"^[0-9]{6,12}$", description="6 to 12 digits")]
    sandbox: SandboxFlag = False


class ResolvedAccount(ApiModel):
    account_name: str


# -- customers --------------------------------------------------------------------------------

_NO_CONTROL = r"^[^\x00-\x1f\x7f]+$"
Text = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=_NO_CONTROL)
]
Email = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True,
        max_length=254,
        pattern=r"^[^@ \x00-\x1f\x7f]+@[^@ \x00-\x1f\x7f]+\.[^@ \x00-\x1f\x7f]+$",
    ),
]
Phone = Annotated[str, Field(pattern=r"^\+?[0-9]{6,15}$", description="Digits, optional leading +")]


def _real_date(value: str, order: str) -> str:
    parts = [int(p) for p in value.split("-")]
    day, month, year = parts if order == "dmy" else parts[::-1]
    try:
        date(year, month, day)
    except ValueError:
        raise ValueError("not a calendar date") from None
    if year < 1900:
        raise ValueError("year before 1900")
    return value


BirthDate = Annotated[
    str,
    Field(
        pattern=r"^(0[1-9]|[12][0-9]|3[01])-(0[1-9]|1[0-2])-(19|2[0-9])[0-9]{2}$",
        description="dd-mm-yyyy",
    ),
    AfterValidator(lambda v: _real_date(v, "dmy")),
]
IsoDate = Annotated[
    str,
    Field(
        pattern=r"^(19|2[0-9])[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
        description="yyyy-mm-dd",
    ),
    AfterValidator(lambda v: _real_date(v, "ymd")),
]


class AddressBody(ApiModel):
    """Forwarded to the provider, never stored or returned. Country is the corridor's."""

    model_config = ConfigDict(extra="forbid", strict=True)

    line1: Text
    line2: Text | None = None
    city: Text
    state: Text
    postal_code: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 -]{1,11}$")]


def _json_boolean(value: object) -> object:
    # Literal[True] alone would take 1 (1 == True in Python); only the JSON boolean counts.
    if not isinstance(value, bool):
        raise ValueError("must be the boolean true")
    return value


# The JSON boolean true and nothing else.
TermsAccepted = Annotated[Literal[True], BeforeValidator(_json_boolean)]


class CustomerBody(WalletBody):
    accepted_terms: TermsAccepted = Field(
        description="Must be true; otherwise 400 and the provider is never asked"
    )
    first_name: Text | None = None
    last_name: Text | None = None
    email: Email | None = None
    phone: Phone | None = None
    birth_date: BirthDate | None = Field(default=None, description="dd-mm-yyyy; never stored")
    address: AddressBody | None = Field(default=None, description="Never stored or returned")


class Customer(ApiModel):
    id: str
    kyc_status: KycStateName | None = Field(description="null before any review")
    has_provider_customer: bool = Field(
        description="true: a buy may proceed to verification; false: sells only"
    )
    rejection_reason: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present when the provider profile was not created",
    )


class CustomerResult(ApiModel):
    customer: Customer


class CustomerDetails(ApiModel):
    first_name: str | None
    last_name: str | None
    email: str | None
    phone: str | None
    registered: bool = Field(description="Whether the wallet has a provider profile")


class DetailsResult(ApiModel):
    details: CustomerDetails | None = Field(description="null when nobody registered the wallet")


# -- KYC ----------------------------------------------------------------------------------------

IMAGE_MAX_BYTES = 4 * 1024 * 1024  # RA11: decoded size of each image
# Standard base64 with padding (non-empty), optionally behind a data: URL prefix.
IMAGE_PATTERN = (
    r"^(data:[A-Za-z0-9.+/-]{0,100};base64,)?([A-Za-z0-9+/]{4})*"
    r"([A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)$"
)


def _image(value: str) -> str:
    """Strip the data: URL prefix and check the decoded size (the pattern has checked the
    alphabet); the bare base64 is what is forwarded."""
    if value.startswith("data:"):
        value = value.partition(",")[2]
    padding = len(value) - len(value.rstrip("="))
    decoded_size = len(value) * 3 // 4 - padding
    if decoded_size > IMAGE_MAX_BYTES:
        raise ValueError(
            f"image is {decoded_size} bytes after base64 decoding; at most {IMAGE_MAX_BYTES}"
        )
    return value


Image = Annotated[
    str,
    Field(
        pattern=IMAGE_PATTERN,
        description="base64 (a data:<type>;base64, prefix is stripped), at most 4 MiB decoded",
    ),
    AfterValidator(_image),
]


class DocumentBody(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["passport", "national-id", "drivers-license"]
    number: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 /-]{0,39}$")]
    expiry_date: IsoDate | None = None
    image_front: Image
    image_back: Image | None = None


class KycBody(WalletBody):
    document: DocumentBody
    selfie_image: Image


class KycStatusBody(WalletBody):
    fiat: Currency = "NGN"


class MaxBuy(ApiModel):
    amount: str
    currency: str


class KycState(ApiModel):
    state: KycStateName
    provider_status: str = Field(description="The provider's own word, e.g. awaiting_review")
    rejection_reasons: list[str] = Field(description="Show verbatim when rejected")
    requirements_due: list[str]
    level: str | None = Field(description="The provider's tier label when given")
    can_deposit: bool = Field(description="Whether the provider accepts a deposit from this person")
    max_buy: MaxBuy = Field(description="The corridor's single-deposit cap (deposits up to)")


class KycSubmitted(ApiModel):
    kyc: KycState = Field(description="The review right after submission, normally pending")


class KycResult(ApiModel):
    kyc: KycState | None = Field(description="null when the wallet has no customer record")


class KycLink(ApiModel):
    url: str = Field(description="A provider-hosted verification page")
