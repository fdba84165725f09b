"""The provider API's JSON shapes (docs/provider-sandbox.md, `/api/v1`), in both directions:
answers parsed into the port's data classes, and our request bodies. A field missing or of the
wrong type raises `KeyError`/`TypeError`/`ValueError`; the client turns those into
`MalformedAnswer` (an unusable provider: 502 upstream_error)."""

from __future__ import annotations

from typing import Any

from rfqkit.timestamps import unix_seconds
from simulator.services.ramp.ports import (
    Capabilities,
    KycDocument,
    KycReview,
    PersonDetails,
    ProviderCustomer,
    ProviderQuote,
    ProviderRecipient,
    ProviderTransfer,
    ProviderUnreachable,
    Side,
    StatusChange,
)


class MalformedAnswer(ProviderUnreachable):
    """The provider answered 2xx with a body we cannot read: the outcome is unknown."""


def _unix(value: Any) -> float:
    return unix_seconds(value)  # ValueError for anything but an ISO-8601 UTC time


def json_str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else json_str(value)


def _side(value: Any) -> Side:
    if value == "buy":
        return "buy"
    if value == "sell":
        return "sell"
    raise TypeError(f"unknown side {value!r}")


def _ints(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise TypeError(f"expected a list of integers, got {value!r}")
    return tuple(value)


def _strs(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TypeError(f"expected a list of strings, got {value!r}")
    return tuple(json_str(v) for v in value)


def json_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {value!r}")
    return value


def parse_capabilities(data: dict[str, Any]) -> Capabilities:
    requires = json_object(data["requires"])
    max_buy = json_object(data["maxBuy"])
    sides = tuple(_side(s) for s in data["sides"])
    return Capabilities(
        provider=json_str(data["provider"]),
        display_name=json_str(data["displayName"]),
        fiat=json_str(data["fiat"]),
        token=json_str(data["token"]),
        chains=_ints(data["chains"]),
        sandbox_chains=_ints(data["sandboxChains"]),
        sides=sides,
        enabled=bool(data["enabled"]),
        requires_customer_details=bool(requires["customerDetails"]),
        requires_payout_bank_account=bool(requires["payoutBankAccount"]),
        requires_destination_wallet=bool(requires["destinationWallet"]),
        max_buy_amount=json_str(max_buy["amount"]),
        max_buy_currency=json_str(max_buy["currency"]),
        business_profile_sells=bool(data.get("businessProfileSells", True)),
    )


def parse_review(data: dict[str, Any]) -> KycReview:
    max_buy = json_object(data["maxBuy"])
    return KycReview(
        status=json_str(data["status"]),
        reasons=_strs(data.get("reasons")),
        requirements_due=_strs(data.get("requirementsDue")),
        level=_opt_str(data.get("level")),
        can_deposit=bool(data["canDeposit"]),
        max_buy_amount=json_str(max_buy["amount"]),
        max_buy_currency=json_str(max_buy["currency"]),
    )


def parse_customer(data: dict[str, Any]) -> ProviderCustomer:
    kind = data.get("type", "individual")
    if kind not in ("individual", "business"):
        raise TypeError(f"unknown customer type {kind!r}")
    return ProviderCustomer(id=json_str(data["id"]), type=kind)


def parse_transfer(data: dict[str, Any]) -> ProviderTransfer:
    return ProviderTransfer(
        id=json_str(data["id"]),
        reference=json_str(data["reference"]),
        side=_side(data["side"]),
        chain_id=int(data["chainId"]),
        sandbox=bool(data.get("sandbox", False)),
        fiat=json_str(data["fiat"]),
        token=json_str(data["token"]),
        source_amount=json_str(data["sourceAmount"]),
        target_amount=json_str(data["targetAmount"]),
        rate_label=json_str(data["rateLabel"]),
        fee_label=json_str(data["feeLabel"]),
        status=json_str(data["status"]),
        status_history=tuple(
            StatusChange(status=json_str(json_object(item)["status"]), at=_unix(item["at"]))
            for item in data.get("statusHistory") or []
        ),
        pay_in=json_object(data.get("payIn") or {}),
        pay_out=json_object(data.get("payOut") or {}),
        customer_id=_opt_str(data.get("customerId")),
        recipient_id=_opt_str(data.get("recipientId")),
        retry_of=_opt_str(data.get("retryOf")),
        expires_at=_unix(data["expiresAt"]),
        created_at=_unix(data["createdAt"]),
        updated_at=_unix(data.get("updatedAt") or data["createdAt"]),
    )


def parse_quote(data: dict[str, Any]) -> ProviderQuote:
    return ProviderQuote(
        quote_id=json_str(data["quoteId"]),
        side=_side(data["side"]),
        source_amount=json_str(data["sourceAmount"]),
        target_amount=json_str(data["targetAmount"]),
        rate=json_str(data["rate"]),
        fee=json_str(data["fee"]),
        rate_label=json_str(data["rateLabel"]),
        fee_label=json_str(data["feeLabel"]),
        expires_at=_unix(data["expiresAt"]),
    )


def parse_recipient(data: dict[str, Any]) -> ProviderRecipient:
    return ProviderRecipient(
        recipient_id=json_str(data["recipientId"]),
        bank_code=json_str(data["bankCode"]),
        bank_name=json_str(data["bankName"]),
        account_number=json_str(data["accountNumber"]),
        account_name=json_str(data["accountName"]),
    )


def person_body(details: PersonDetails) -> dict[str, Any]:
    """The provider's customer fields; what was not given is left out (a PATCH keeps it)."""
    body: dict[str, Any] = {}
    for name, value in (
        ("firstName", details.first_name),
        ("lastName", details.last_name),
        ("email", details.email),
        ("phone", details.phone),
        ("birthDate", details.birth_date),
    ):
        if value is not None:
            body[name] = value
    if details.address is not None:
        address = details.address
        body["address"] = {
            "line1": address.line1,
            "city": address.city,
            "state": address.state,
            "postalCode": address.postal_code,
            **({"line2": address.line2} if address.line2 is not None else {}),
        }
    return body


def kyc_body(document: KycDocument) -> dict[str, Any]:
    """The provider's KYC submission: the document, then the selfie; what was not given is left
    out."""
    body: dict[str, Any] = {
        "type": document.type,
        "number": document.number,
        "imageFront": document.image_front,
    }
    if document.expiry_date is not None:
        body["expiryDate"] = document.expiry_date
    if document.image_back is not None:
        body["imageBack"] = document.image_back
    return {"document": body, "selfieImage": document.selfie_image}
