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
from typing import Any, Literal

import aiohttp

from simulator.adapters.ramp.provider_wire import (
    MalformedAnswer,
    json_object,
    json_str,
    kyc_body,
    parse_capabilities,
    parse_customer,
    parse_quote,
    parse_recipient,
    parse_review,
    parse_transfer,
    person_body,
)
from simulator.services.ramp.ports import (
    Bank,
    Capabilities,
    KycDocument,
    KycReview,
    PersonDetails,
    ProviderBalance,
    ProviderConflict,
    ProviderCustomer,
    ProviderError,
    ProviderInvalid,
    ProviderNotFound,
    ProviderQuote,
    ProviderRecipient,
    ProviderRefused,
    ProviderTransfer,
    ProviderUnreachable,
    Side,
)

log = logging.getLogger("rfqsim.provider")

DEFAULT_TIMEOUT_S = 10.0


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

    async def _exchange(
        self, method: str, url: str, body: Any, params: dict[str, str] | None, who: str
    ) -> tuple[int, bytes]:
        """One request: the status and the raw answer; any transport failure or timeout is
        `ProviderUnreachable`."""
        try:
            async with self._client().request(method, url, json=body, params=params) as reply:
                return reply.status, await reply.read()
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ProviderUnreachable(f"{who} unreachable: {type(exc).__name__}") from exc

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        status, raw = await self._exchange(
            method, f"{self.base_url}/api/v1{path}", body, params, f"provider {self.provider_id}"
        )
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
            return parse(json_object(data[member]) if member is not None else data)
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
            return [
                Bank(code=json_str(json_object(b)["code"]), name=json_str(b["name"]))
                for b in data["banks"]
            ]

        result: list[Bank] = await self._read("GET", "/banks", parse)
        return result

    async def resolve_account(self, bank_code: str, account_number: str) -> str:
        result: str = await self._read(
            "POST",
            "/banks/resolve",
            lambda data: json_str(data["accountName"]),
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

    async def submit_kyc(self, customer_id: str, document: KycDocument) -> KycReview:
        result: KycReview = await self._read(
            "POST",
            f"/customers/{customer_id}/kyc",
            parse_review,
            body=kyc_body(document),
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
            "POST", f"/customers/{customer_id}/kyc/link", lambda data: json_str(data["url"])
        )
        return result

    async def balance(self, customer_id: str | None) -> ProviderBalance:
        if customer_id is None:
            # The provider API keeps parked balances per personal profile only; the business
            # profile has none to ask about (a stalled payout retry needs a personal profile).
            raise ProviderInvalid("balances exist only for personal profiles")
        result: ProviderBalance = await self._read(
            "GET",
            f"/customers/{customer_id}/balance",
            lambda data: ProviderBalance(
                available=json_str(data["available"]), currency=json_str(data["currency"])
            ),
        )
        return result

    async def quote(
        self, *, side: Side, fiat: str, token: str, chain_id: int, amount: str, sandbox: bool
    ) -> ProviderQuote:
        result: ProviderQuote = await self._read(
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
    ) -> ProviderRecipient:
        result: ProviderRecipient = await self._read(
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
            return parse_transfer(json_object(items[0])) if items else None

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
        status, raw = await self._exchange(
            method, url, body, None, f"provider sandbox {self.provider_id}"
        )
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return status, parsed if isinstance(parsed, dict) else None


async def close_all(providers: list[HttpRampProvider]) -> None:
    await asyncio.gather(*(p.close() for p in providers), return_exceptions=True)
