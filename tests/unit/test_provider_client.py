"""The provider API client over real loopback HTTP against a scripted provider: parsing, the bearer
key, and every failure mapped to the port's errors (unreachable, refused, not found, invalid,
conflict with the existing transfer)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqkit.free_ports import unclaimed_port
from simulator.adapters.ramp.provider_client import HttpRampProvider
from simulator.services.ramp.ports import (
    PersonDetails,
    ProviderConflict,
    ProviderInvalid,
    ProviderNotFound,
    ProviderRefused,
    ProviderUnreachable,
)

CAPABILITIES = {
    "provider": "ngnramp",
    "displayName": "NGN Ramp",
    "fiat": "NGN",
    "token": "NGNS",
    "chains": [56, 97],
    "sandboxChains": [97],
    "sides": ["buy", "sell"],
    "enabled": True,
    "businessProfileSells": False,
    "requires": {"customerDetails": True, "payoutBankAccount": True, "destinationWallet": True},
    "maxBuy": {"amount": "5000000", "currency": "NGN"},
}
TRANSFER = {
    "id": "trf_1",
    "reference": "rtr_1",
    "side": "buy",
    "chainId": 97,
    "sandbox": False,
    "fiat": "NGN",
    "token": "NGNS",
    "sourceAmount": "10000.00",
    "targetAmount": "9750.500000",
    "rateLabel": "1 NGN = 0.995 NGNS",
    "feeLabel": "199.50 NGNS",
    "status": "awaiting_funds",
    "statusHistory": [{"status": "awaiting_funds", "at": "2026-01-01T00:00:00.000Z"}],
    "payIn": {"type": "temporary_bank_account"},
    "payOut": {"type": "address"},
    "customerId": "cus_1",
    "recipientId": None,
    "retryOf": None,
    "expiresAt": "2026-01-01T00:30:00.000Z",
    "createdAt": "2026-01-01T00:00:00.000Z",
    "updatedAt": "2026-01-01T00:00:00.000Z",
}

Route = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error(status: int, kind: str, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": {"type": kind, "message": message, **extra}}, status=status)


@pytest.fixture
async def provider() -> AsyncIterator[tuple[HttpRampProvider, dict[str, Any]]]:
    seen: dict[str, Any] = {}

    async def capabilities(request: web.Request) -> web.Response:
        seen["auth"] = request.headers.get("Authorization")
        return web.json_response(CAPABILITIES)

    async def create_customer(request: web.Request) -> web.Response:
        body = await request.json()
        seen["customer"] = body
        if body["lastName"] == "Refused":
            return error(422, "refused", "We cannot onboard this person")
        if body["reference"] == "0xknown":
            existing = {"id": "cus_known", "reference": "0xknown"}
            return error(409, "conflict", "customer exists", customer=existing)
        return web.json_response({"customer": {"id": "cus_1", "type": "individual"}}, status=201)

    async def update_customer(request: web.Request) -> web.Response:
        seen["patched"] = (request.match_info["id"], await request.json())
        customer = {"id": request.match_info["id"], "type": "individual"}
        return web.json_response({"customer": customer})

    async def transfers(request: web.Request) -> web.Response:
        return error(409, "conflict", "reference already used", transfer=TRANSFER)

    async def by_reference(request: web.Request) -> web.Response:
        found = [TRANSFER] if request.query.get("reference") == "rtr_1" else []
        return web.json_response({"transfers": found})

    async def quote(request: web.Request) -> web.Response:
        return error(400, "invalid", "amount: not a decimal")

    async def missing(request: web.Request) -> web.Response:
        return error(404, "not_found", "No such transfer")

    async def unavailable(request: web.Request) -> web.Response:
        return error(503, "unavailable", "switched off")

    async def garbled(request: web.Request) -> web.Response:
        return web.Response(body=b"<html>", content_type="text/html")

    async def hang_up(request: web.Request) -> web.Response:
        assert request.transport is not None
        request.transport.close()
        return web.Response(status=503)

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.json_response({"url": "late"})

    app = web.Application()
    app.router.add_get("/api/v1/capabilities", capabilities)
    app.router.add_post("/api/v1/customers", create_customer)
    app.router.add_patch("/api/v1/customers/{id}", update_customer)
    app.router.add_post("/api/v1/transfers", transfers)
    app.router.add_get("/api/v1/transfers", by_reference)
    app.router.add_post("/api/v1/quotes", quote)
    app.router.add_get("/api/v1/transfers/{id}", missing)
    app.router.add_get("/api/v1/banks", unavailable)
    app.router.add_post("/api/v1/banks/resolve", garbled)
    app.router.add_get("/api/v1/customers/{id}/kyc", hang_up)
    app.router.add_post("/api/v1/customers/{id}/kyc/link", slow)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    client = HttpRampProvider("ngnramp", str(server.make_url("/")), "sk_test", timeout_s=0.5)
    try:
        yield client, seen
    finally:
        await client.close()
        await server.close()


async def test_capabilities_parsed_with_the_bearer_key(
    provider: tuple[HttpRampProvider, dict[str, Any]],
) -> None:
    client, seen = provider
    caps = await client.capabilities()
    assert caps.chains == (56, 97)
    assert caps.sandbox_chains == (97,)
    assert caps.sides == ("buy", "sell")
    assert caps.business_profile_sells is False
    assert caps.max_buy_amount == "5000000"
    assert seen["auth"] == "Bearer sk_test"


async def test_customer_body_and_refusal(provider: tuple[HttpRampProvider, dict[str, Any]]) -> None:
    client, seen = provider
    details = PersonDetails(first_name="Ada", last_name="Obi", email="a@b.co", phone="+2348000")
    customer = await client.create_customer(reference="0xABC", kind="individual", details=details)
    assert customer.id == "cus_1"
    assert seen["customer"] == {
        "reference": "0xabc",
        "type": "individual",
        "firstName": "Ada",
        "lastName": "Obi",
        "email": "a@b.co",
        "phone": "+2348000",
    }
    refused = PersonDetails(first_name="A", last_name="Refused", email="a@b.co", phone="+234800")
    with pytest.raises(ProviderRefused) as exc:
        await client.create_customer(reference="0xabc", kind="individual", details=refused)
    assert exc.value.message == "We cannot onboard this person"


async def test_a_profile_made_before_a_lost_answer_is_updated_not_duplicated(
    provider: tuple[HttpRampProvider, dict[str, Any]],
) -> None:
    client, seen = provider
    details = PersonDetails(first_name="Ada", last_name="Obi", email="a@b.co", phone="+2348000")
    customer = await client.create_customer(reference="0xKNOWN", kind="individual", details=details)
    assert customer.id == "cus_known"
    assert seen["patched"] == (
        "cus_known",
        {"firstName": "Ada", "lastName": "Obi", "email": "a@b.co", "phone": "+2348000"},
    )


async def test_conflict_carries_the_existing_transfer(
    provider: tuple[HttpRampProvider, dict[str, Any]],
) -> None:
    client, _ = provider
    with pytest.raises(ProviderConflict) as exc:
        await client.create_transfer(
            quote_id="q", reference="rtr_1", customer_id="cus_1", chain_id=97, sandbox=False
        )
    existing = exc.value.existing
    assert existing is not None
    assert existing.id == "trf_1"
    assert existing.status_history[0].status == "awaiting_funds"
    assert existing.expires_at - existing.created_at == 1800
    found = await client.transfer_by_reference("rtr_1")
    assert found is not None
    assert found.reference == "rtr_1"
    assert await client.transfer_by_reference("rtr_2") is None


async def test_status_mapping(provider: tuple[HttpRampProvider, dict[str, Any]]) -> None:
    client, _ = provider
    with pytest.raises(ProviderInvalid, match="amount"):
        await client.quote(
            side="buy", fiat="NGN", token="NGNS", chain_id=97, amount="x", sandbox=False
        )
    with pytest.raises(ProviderNotFound):
        await client.transfer("trf_404")
    with pytest.raises(ProviderUnreachable):  # 503
        await client.banks()
    with pytest.raises(ProviderUnreachable):  # 2xx that is not JSON
        await client.resolve_account("058", "0123456789")
    with pytest.raises(ProviderUnreachable):  # connection closed without an answer
        await client.kyc_review("cus_1", "NGN")
    with pytest.raises(ProviderUnreachable):  # no answer within the timeout
        await client.kyc_link("cus_1")


async def test_nobody_listening_is_unreachable() -> None:
    port = unclaimed_port()
    client = HttpRampProvider("ngnramp", f"http://127.0.0.1:{port}", "sk")
    try:
        with pytest.raises(ProviderUnreachable):
            await client.capabilities()
    finally:
        await client.close()
