"""Request bodies of the provider API and the controls, validated at the edge. A body that does
not fit is 400 `invalid` naming the first problem (never a 500)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel

from provider_sandbox.errors import SandboxInvalid
from rfqkit.wire import WireModel

Amount = Annotated[str, StringConstraints(pattern=r"^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$")]
Address = Annotated[str, StringConstraints(pattern=r"^0x[0-9a-fA-F]{40}$")]
Digits = Annotated[str, StringConstraints(pattern=r"^[0-9]{6,12}$")]
BankCode = Annotated[str, StringConstraints(pattern=r"^[0-9]{3,6}$")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=200)]
# An email address is at most 254 characters (RFC 5321's path limit), as the simulator checks.
EmailText = Annotated[str, StringConstraints(min_length=1, max_length=254)]


class Body(WireModel):
    model_config = ConfigDict(extra="ignore")


class CustomerIn(Body):
    """An individual needs all four details; a business profile may come with fewer."""

    reference: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    type: Literal["individual", "business"] = "individual"
    first_name: Text | None = None
    last_name: Text | None = None
    email: EmailText | None = None
    phone: Text | None = None
    birth_date: str | None = None
    address: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _individual_details(self) -> CustomerIn:
        if self.type == "individual":
            for name in ("first_name", "last_name", "email", "phone"):
                if getattr(self, name) is None:
                    raise ValueError(f"{to_camel(name)} is required for an individual")
        return self


class CustomerPatch(Body):
    first_name: Text | None = None
    last_name: Text | None = None
    email: EmailText | None = None
    phone: Text | None = None
    birth_date: str | None = None
    address: dict[str, Any] | None = None


class Document(Body):
    type: Text
    number: Text
    expiry_date: str | None = None
    image_front: Annotated[str, StringConstraints(min_length=1)]
    image_back: str | None = None


class KycIn(Body):
    document: Document
    selfie_image: Annotated[str, StringConstraints(min_length=1)]


class ResolveIn(Body):
    bank_code: BankCode
    account_number: Digits


class QuoteIn(Body):
    side: Literal["buy", "sell"]
    fiat: Text
    token: Text
    chain_id: int
    amount: Amount
    sandbox: bool = False


class RecipientIn(Body):
    customer_id: str | None = None
    bank_code: BankCode
    account_number: Digits
    account_name: Text


class Destination(Body):
    address: Address
    chain_id: int


class TransferIn(Body):
    quote_id: Text
    reference: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    customer_id: str | None = None
    destination: Destination | None = None
    recipient_id: str | None = None
    refund_address: Address | None = None
    sandbox: bool = False


class RetryIn(Body):
    reference: Annotated[str, StringConstraints(min_length=1, max_length=100)]


# -- controls --------------------------------------------------------------------------------


class PayInIn(Body):
    mode: Literal["exact", "short", "late"] = "exact"
    amount: Amount | None = None


class AdvanceIn(Body):
    to: str | None = None


class FailIn(Body):
    refund: bool = False


class SidesIn(Body):
    buy: bool | None = None
    sell: bool | None = None


class SwitchesIn(Body):
    enabled: bool | None = None
    sides: SidesIn | None = None
    chains: list[int] | None = None
    sandbox_chains: list[int] | None = None
    business_profile_sells: bool | None = None


class WebhooksIn(Body):
    mode: Literal["deliver", "drop", "delay"]
    delay_seconds: Annotated[float, Field(ge=0)] = 0.0


class ReachabilityIn(Body):
    reachable: bool


class ShiftIn(Body):
    percent: Annotated[Decimal, Field(gt=-100, le=1000)]


class ConfigIn(Body):
    review_delay_seconds: Annotated[float, Field(ge=0)] | None = None
    step_delay_seconds: Annotated[float, Field(ge=0)] | None = None
    max_buy: Amount | None = None
    api_latency_ms: Annotated[int, Field(ge=0, le=600_000)] | None = None


class OutcomeIn(Body):
    outcome: Literal["approve", "reject", "expire"]


class ClockIn(Body):
    seconds: Annotated[float, Field(gt=0)]


B = TypeVar("B", bound=BaseModel)


def parse(model: type[B], raw: Any) -> B:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise SandboxInvalid(f"{where}: {first['msg']}") from None
