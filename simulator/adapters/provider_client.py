"""The provider's HTTP API (docs/provider-sandbox.md, `/api/v1`) behind the `RampProvider` port.

One `aiohttp.ClientSession` per provider, created on first use inside the running loop and closed
by the provider runtime. Every failure leaves as one of the port's errors, so the services never
see aiohttp:

- connection refused, reset or closed unanswered, a timeout, 5xx, 401, an unreadable answer:
  `ProviderUnreachable`;
- 422 `refused`: `ProviderRefused` (its sentence as `message`);
- 404 `not_found`: `ProviderNotFound`; 400 `invalid`: `ProviderInvalid`;
- 409 `conflict` on a transfer: `ProviderConflict` carrying the existing transfer.

A 401 is our own misconfiguration (wrong API key), but to a caller of the ramp it is the same as
a provider that cannot be used: 502 upstream_error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime
from typing import Any, Literal

import aiohttp

from simulator.services.ramp_ports import (
    Balance,
    Bank,
    Capabilities,
    KycReview,
    PersonDetails,
    ProviderConflict,
    ProviderCustomer,
    ProviderError,
    ProviderInvalid,
    ProviderNotFound,
    ProviderRefused,
    ProviderTransfer,
    ProviderUnreachable,
    Quote,
    Recipient,
    Side,
    StatusChange,
)

log = logging.getLogger("rfqsim.provider")

DEFAULT_TIMEOUT_S = 10.0


class MalformedAnswer(ProviderUnreachable):
    """The provider answered 2xx with a body we cannot read: the outcome is unknown."""


def _unix(value: Any) -> float:
    if not isinstance(value, str):
        raise TypeError(f"timestamp is not a string: {value!r}")
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else _str(value)


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
    return tuple(_str(v) for v in value)


def _dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {value!r}")
    return value


def parse_capabilities(data: dict[str, Any]) -> Capabilities:
    requires = _dict(data["requires"])
    max_buy = _dict(data["maxBuy"])
    sides = tuple(_side(s) for s in data["sides"])
    return Capabilities(
        provider=_str(data["provider"]),
        display_name=_str(data["displayName"]),
        fiat=_str(data["fiat"]),
        token=_str(data["token"]),
        chains=_ints(data["chains"]),
        sandbox_chains=_ints(data["sandboxChains"]),
        sides=sides,
        enabled=bool(data["enabled"]),
        requires_customer_details=bool(requires["customerDetails"]),
        requires_payout_bank_account=bool(requires["payoutBankAccount"]),
        requires_destination_wallet=bool(requires["destinationWallet"]),
        max_buy_amount=_str(max_buy["amount"]),
        max_buy_currency=_str(max_buy["currency"]),
        business_profile_sells=bool(data.get("businessProfileSells", True)),
    )


def parse_review(data: dict[str, Any]) -> KycReview:
    max_buy = _dict(data["maxBuy"])
    return KycReview(
        status=_str(data["status"]),
        reasons=_strs(data.get("reasons")),
        requirements_due=_strs(data.get("requirementsDue")),
        level=_opt_str(data.get("level")),
        can_deposit=bool(data["canDeposit"]),
        max_buy_amount=_str(max_buy["amount"]),
        max_buy_currency=_str(max_buy["currency"]),
    )


def parse_customer(data: dict[str, Any]) -> ProviderCustomer:
    kind = data.get("type", "individual")
    if kind not in ("individual", "business"):
        raise TypeError(f"unknown customer type {kind!r}")
    return ProviderCustomer(id=_str(data["id"]), type=kind)


def parse_transfer(data: dict[str, Any]) -> ProviderTransfer:
    return ProviderTransfer(
        id=_str(data["id"]),
        reference=_str(data["reference"]),
        side=_side(data["side"]),
        chain_id=int(data["chainId"]),
        sandbox=bool(data.get("sandbox", False)),
        fiat=_str(data["fiat"]),
        token=_str(data["token"]),
        source_amount=_str(data["sourceAmount"]),
        target_amount=_str(data["targetAmount"]),
        rate_label=_str(data["rateLabel"]),
        fee_label=_str(data["feeLabel"]),
        status=_str(data["status"]),
        status_history=tuple(
            StatusChange(status=_str(_dict(item)["status"]), at=_unix(item["at"]))
            for item in data.get("statusHistory") or []
        ),
        pay_in=_dict(data.get("payIn") or {}),
        pay_out=_dict(data.get("payOut") or {}),
        customer_id=_opt_str(data.get("customerId")),
        recipient_id=_opt_str(data.get("recipientId")),
        retry_of=_opt_str(data.get("retryOf")),
        expires_at=_unix(data["expiresAt"]),
        created_at=_unix(data["createdAt"]),
        updated_at=_unix(data.get("updatedAt") or data["createdAt"]),
    )


def parse_quote(data: dict[str, Any]) -> Quote:
    return Quote(
        quote_id=_str(data["quoteId"]),
        side=_side(data["side"]),
        source_amount=_str(data["sourceAmount"]),
        target_amount=_str(data["targetAmount"]),
        rate=_str(data["rate"]),
        fee=_str(data["fee"]),
        rate_label=_str(data["rateLabel"]),
        fee_label=_str(data["feeLabel"]),
        expires_at=_unix(data["expiresAt"]),
    )


def parse_recipient(data: dict[str, Any]) -> Recipient:
    return Recipient(
        recipient_id=_str(data["recipientId"]),
        bank_code=_str(data["bankCode"]),
        bank_name=_str(data["bankName"]),
        account_number=_str(data["accountNumber"]),
        account_name=_str(data["accountName"]),
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


class HttpRampProvider:
    """`RampProvider` over HTTP. `provider_id` is the id the simulator serves it under."""

    def __init__(
        self,
        provider_id: str,
        base_url: str,
        api_key: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.provider_id = provider_id
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, connect=min(timeout_s, 5.0))
        self._session: aiohttp.ClientSession | None = None  # one per provider, made on first use

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=self._timeout,
                headers={"Authorization": f"Bearer {self._api_key}"},
                # A sandbox made unreachable closes pooled connections; a fresh one per call
                # would be slower, so keep the pool and let a failed call surface as unreachable.
                connector=aiohttp.TCPConnector(limit=64, limit_per_host=32),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        url = f"{self.base_url}/api/v1{path}"
        try:
            async with self._client().request(method, url, json=body, params=params) as reply:
                raw = await reply.read()
                status = reply.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ProviderUnreachable(
                f"provider {self.provider_id} unreachable: {type(exc).__name__}"
            ) from exc
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = None
        if 200 <= status < 300:
            if not isinstance(parsed, dict):
                raise MalformedAnswer(f"provider {self.provider_id}: {method} {path} not JSON")
            return parsed
        raise self._error(status, parsed, method, path)

    def _error(self, status: int, parsed: Any, method: str, path: str) -> ProviderError:
        error = parsed.get("error") if isinstance(parsed, dict) else None
        error = error if isinstance(error, dict) else {}
        message = error.get("message")
        message = message if isinstance(message, str) and message else ""
        if status == 422:
            return ProviderRefused(message or "The provider declined the request")
        if status == 404:
            return ProviderNotFound(message or f"{method} {path}: not found")
        if status == 400:
            return ProviderInvalid(message or f"{method} {path}: invalid")
        if status == 409:
            existing = None
            transfer = error.get("transfer")
            if isinstance(transfer, dict):
                try:
                    existing = parse_transfer(transfer)
                except (KeyError, TypeError, ValueError):
                    log.warning("provider %s: unreadable transfer in a 409", self.provider_id)
            customer = error.get("customer")
            customer_id = customer.get("id") if isinstance(customer, dict) else None
            return ProviderConflict(
                message or "conflict",
                existing,
                customer_id if isinstance(customer_id, str) else None,
            )
        log.warning("provider %s: %s %s answered %d", self.provider_id, method, path, status)
        return ProviderUnreachable(f"provider {self.provider_id} answered {status}")

    async def _read(
        self,
        method: str,
        path: str,
        parse: Any,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
        member: str | None = None,
    ) -> Any:
        data = await self._call(method, path, body=body, params=params)
        try:
            return parse(_dict(data[member]) if member is not None else data)
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedAnswer(
                f"provider {self.provider_id}: unreadable answer to {method} {path}: {exc}"
            ) from exc

    # -- the port --------------------------------------------------------------------------

    async def capabilities(self) -> Capabilities:
        result: Capabilities = await self._read("GET", "/capabilities", parse_capabilities)
        return result

    async def banks(self) -> list[Bank]:
        def parse(data: dict[str, Any]) -> list[Bank]:
            return [Bank(code=_str(_dict(b)["code"]), name=_str(b["name"])) for b in data["banks"]]

        result: list[Bank] = await self._read("GET", "/banks", parse)
        return result

    async def resolve_account(self, bank_code: str, account_number: str) -> str:
        result: str = await self._read(
            "POST",
            "/banks/resolve",
            lambda data: _str(data["accountName"]),
            body={"bankCode": bank_code, "accountNumber": account_number},
        )
        return result

    async def create_customer(
        self, *, reference: str, kind: Literal["individual", "business"], details: PersonDetails
    ) -> ProviderCustomer:
        body = {"reference": reference.lower(), "type": kind, **person_body(details)}
        try:
            result: ProviderCustomer = await self._read(
                "POST", "/customers", parse_customer, body=body, member="customer"
            )
        except ProviderConflict as conflict:
            # The provider already has a profile for this wallet: an earlier answer of ours was
            # lost after it was created. Update that profile instead of failing (or duplicating).
            if conflict.existing_customer_id is None:
                raise
            return await self.update_customer(conflict.existing_customer_id, details)
        return result

    async def update_customer(self, customer_id: str, details: PersonDetails) -> ProviderCustomer:
        result: ProviderCustomer = await self._read(
            "PATCH",
            f"/customers/{customer_id}",
            parse_customer,
            body=person_body(details),
            member="customer",
        )
        return result

    async def submit_kyc(
        self, customer_id: str, *, document: dict[str, Any], selfie_image: str
    ) -> KycReview:
        result: KycReview = await self._read(
            "POST",
            f"/customers/{customer_id}/kyc",
            parse_review,
            body={"document": document, "selfieImage": selfie_image},
            member="review",
        )
        return result

    async def kyc_review(self, customer_id: str, fiat: str) -> KycReview:
        result: KycReview = await self._read(
            "GET",
            f"/customers/{customer_id}/kyc",
            parse_review,
            params={"fiat": fiat},
            member="review",
        )
        return result

    async def kyc_link(self, customer_id: str) -> str:
        result: str = await self._read(
            "POST", f"/customers/{customer_id}/kyc/link", lambda data: _str(data["url"])
        )
        return result

    async def balance(self, customer_id: str | None) -> Balance:
        if customer_id is None:
            # The provider API keeps parked balances per personal profile only; the business
            # profile has none to ask about (a stalled payout retry needs a personal profile).
            raise ProviderInvalid("balances exist only for personal profiles")
        result: Balance = await self._read(
            "GET",
            f"/customers/{customer_id}/balance",
            lambda data: Balance(
                available=_str(data["available"]), currency=_str(data["currency"])
            ),
        )
        return result

    async def quote(
        self, *, side: Side, fiat: str, token: str, chain_id: int, amount: str, sandbox: bool
    ) -> Quote:
        result: Quote = await self._read(
            "POST",
            "/quotes",
            parse_quote,
            body={
                "side": side,
                "fiat": fiat,
                "token": token,
                "chainId": chain_id,
                "amount": amount,
                "sandbox": sandbox,
            },
        )
        return result

    async def create_recipient(
        self, *, customer_id: str | None, bank_code: str, account_number: str, account_name: str
    ) -> Recipient:
        result: Recipient = await self._read(
            "POST",
            "/recipients",
            parse_recipient,
            body={
                "customerId": customer_id,
                "bankCode": bank_code,
                "accountNumber": account_number,
                "accountName": account_name,
            },
        )
        return result

    async def create_transfer(
        self,
        *,
        quote_id: str,
        reference: str,
        customer_id: str | None,
        chain_id: int,
        sandbox: bool,
        destination_address: str | None = None,
        recipient_id: str | None = None,
        refund_address: str | None = None,
    ) -> ProviderTransfer:
        body: dict[str, Any] = {
            "quoteId": quote_id,
            "reference": reference,
            "customerId": customer_id,
            "sandbox": sandbox,
        }
        if destination_address is not None:
            body["destination"] = {"address": destination_address, "chainId": chain_id}
        if recipient_id is not None:
            body["recipientId"] = recipient_id
        if refund_address is not None:
            body["refundAddress"] = refund_address
        result: ProviderTransfer = await self._read(
            "POST", "/transfers", parse_transfer, body=body, member="transfer"
        )
        return result

    async def transfer(self, transfer_id: str) -> ProviderTransfer:
        result: ProviderTransfer = await self._read(
            "GET", f"/transfers/{transfer_id}", parse_transfer, member="transfer"
        )
        return result

    async def transfer_by_reference(self, reference: str) -> ProviderTransfer | None:
        def parse(data: dict[str, Any]) -> ProviderTransfer | None:
            items = data["transfers"]
            if not isinstance(items, list):
                raise TypeError("transfers is not a list")
            return parse_transfer(_dict(items[0])) if items else None

        result: ProviderTransfer | None = await self._read(
            "GET", "/transfers", parse, params={"reference": reference}
        )
        return result

    async def retry_payout(self, transfer_id: str, *, reference: str) -> ProviderTransfer:
        result: ProviderTransfer = await self._read(
            "POST",
            f"/transfers/{transfer_id}/retry-payout",
            parse_transfer,
            body={"reference": reference},
            member="transfer",
        )
        return result

    # -- sandbox controls (not part of the provider API; `/_sim/ramp/...` proxies them) -------

    async def control(
        self, method: str, path: str, body: Any = None
    ) -> tuple[int, dict[str, Any] | None]:
        """Forward one `/sandbox/...` control call; returns the status and the JSON answer.
        Controls stay up while the API is made unreachable, so failures here are real."""
        url = f"{self.base_url}/sandbox/{path.lstrip('/')}"
        try:
            async with self._client().request(method, url, json=body) as reply:
                raw = await reply.read()
                status = reply.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ProviderUnreachable(
                f"provider sandbox {self.provider_id} unreachable: {type(exc).__name__}"
            ) from exc
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return status, parsed if isinstance(parsed, dict) else None


async def close_all(providers: list[HttpRampProvider]) -> None:
    await asyncio.gather(*(p.close() for p in providers), return_exceptions=True)
