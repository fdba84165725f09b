"""The provider API (/api/v1): thin handlers that parse with schemas.py, call booking.py and
render views.py. Reads catch the transfer up with the clock first (lazy evaluation)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from provider_sandbox import banks, booking, kyc
from provider_sandbox.appkeys import SANDBOX
from provider_sandbox.core import Sandbox
from provider_sandbox.errors import SandboxConflict, SandboxInvalid, SandboxNotFound, SandboxRefused
from provider_sandbox.schemas import (
    CustomerIn,
    CustomerPatch,
    KycIn,
    QuoteIn,
    RecipientIn,
    ResolveIn,
    RetryIn,
    TransferIn,
    parse,
)
from provider_sandbox.views import (
    balance_view,
    customer_view,
    quote_view,
    recipient_view,
    transfer_view,
)


async def read_json(request: web.Request) -> Any:
    """The body as JSON; an empty body is an empty object (the schema then names what is
    missing); anything unparsable is 400 invalid."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        raise SandboxInvalid("body: not valid JSON") from None


def _sandbox(request: web.Request) -> Sandbox:
    return request.app[SANDBOX]


def capabilities(sandbox: Sandbox) -> dict[str, Any]:
    config, settings = sandbox.config, sandbox.state.settings
    return {
        "provider": config.provider_id,
        "displayName": config.display_name,
        "fiat": config.fiat,
        "token": config.token,
        "chains": list(settings.chains),
        "sandboxChains": list(settings.sandbox_chains),
        "sides": [side for side in ("buy", "sell") if settings.sides.get(side)],
        "enabled": settings.enabled,
        "businessProfileSells": settings.business_profile_sells,
        "requires": {"customerDetails": True, "payoutBankAccount": True, "destinationWallet": True},
        "maxBuy": {"amount": f"{settings.max_buy:f}", "currency": config.fiat},
    }


async def get_capabilities(request: web.Request) -> web.Response:
    return web.json_response(capabilities(_sandbox(request)))


async def get_banks(request: web.Request) -> web.Response:
    return web.json_response({"banks": [{"code": c, "name": n} for c, n in banks.BANKS]})


async def resolve_account(request: web.Request) -> web.Response:
    body = parse(ResolveIn, await read_json(request))
    try:
        name = banks.resolve_account(body.bank_code, body.account_number)
    except banks.UnknownBank as exc:
        raise SandboxNotFound(str(exc)) from None
    except banks.AccountNotVerified as exc:
        raise SandboxRefused(str(exc)) from None
    return web.json_response({"accountName": name})


async def create_customer(request: web.Request) -> web.Response:
    body = parse(CustomerIn, await read_json(request))
    created = booking.create_customer(_sandbox(request), body)
    return web.json_response({"customer": customer_view(created)}, status=201)


async def update_customer(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(CustomerPatch, await read_json(request))
    updated = booking.update_customer(sandbox, request.match_info["id"], body)
    return web.json_response({"customer": customer_view(updated)})


def _review(sandbox: Sandbox, customer_id: str) -> dict[str, Any]:
    found = booking.customer(sandbox, customer_id)
    now = sandbox.clock.time()
    return kyc.review_view(found, now, sandbox.state.settings.max_buy, sandbox.config.fiat)


async def submit_kyc(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    found = booking.customer(sandbox, request.match_info["id"])
    body = parse(KycIn, await read_json(request))
    status = kyc.status_at(found.review, sandbox.clock.time())
    if status in ("awaiting_review", "approved"):
        raise SandboxConflict(f"The customer's review is {status}; no new documents are needed")
    booking.submit_review(sandbox, found, body.document.number)
    return web.json_response({"review": _review(sandbox, found.id)})


async def get_kyc(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    fiat = request.query.get("fiat", sandbox.config.fiat)
    if fiat.upper() != sandbox.config.fiat:
        raise SandboxInvalid(f"fiat: only {sandbox.config.fiat} is offered")
    return web.json_response({"review": _review(sandbox, request.match_info["id"])})


async def kyc_link(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    found = booking.customer(sandbox, request.match_info["id"])
    if found.verify_token is None:
        found.verify_token = sandbox.state.rng.getrandbits(128).to_bytes(16, "big").hex()
    url = f"{request.url.origin()}/sandbox/verify/{found.verify_token}"
    return web.json_response({"url": url})


async def get_balance(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    found = booking.customer(sandbox, request.match_info["id"])
    return web.json_response(balance_view(found, sandbox.config))


async def create_quote(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    quote = booking.create_quote(sandbox, parse(QuoteIn, await read_json(request)))
    return web.json_response(quote_view(quote, sandbox.config))


async def create_recipient(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    recipient = booking.create_recipient(sandbox, parse(RecipientIn, await read_json(request)))
    return web.json_response(recipient_view(recipient), status=201)


async def create_transfer(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(TransferIn, await read_json(request))
    async with sandbox.create_lock:
        created = await booking.create_transfer(sandbox, body)
    view = transfer_view(created, sandbox.state, sandbox.config)
    return web.json_response({"transfer": view}, status=201)


async def get_transfer(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    found = booking.transfer(sandbox, request.match_info["id"])
    await sandbox.engine.refresh(found)
    return web.json_response({"transfer": transfer_view(found, sandbox.state, sandbox.config)})


async def list_transfers(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    reference = request.query.get("reference")
    if not reference:
        raise SandboxInvalid("reference: required")
    found = sandbox.state.transfer_by_reference(reference)
    if found is None:
        return web.json_response({"transfers": []})
    await sandbox.engine.refresh(found)
    view = transfer_view(found, sandbox.state, sandbox.config)
    return web.json_response({"transfers": [view]})


async def retry_payout(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    original = booking.transfer(sandbox, request.match_info["id"])
    body = parse(RetryIn, await read_json(request))
    async with sandbox.engine.lock(original):
        await sandbox.engine.refresh_locked(original)
        retry = booking.retry_payout(sandbox, original, body.reference)
    return web.json_response(
        {"transfer": transfer_view(retry, sandbox.state, sandbox.config)}, status=201
    )


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/v1/capabilities", get_capabilities)
    app.router.add_get("/api/v1/banks", get_banks)
    app.router.add_post("/api/v1/banks/resolve", resolve_account)
    app.router.add_post("/api/v1/customers", create_customer)
    app.router.add_patch("/api/v1/customers/{id}", update_customer)
    app.router.add_post("/api/v1/customers/{id}/kyc", submit_kyc)
    app.router.add_get("/api/v1/customers/{id}/kyc", get_kyc)
    app.router.add_post("/api/v1/customers/{id}/kyc/link", kyc_link)
    app.router.add_get("/api/v1/customers/{id}/balance", get_balance)
    app.router.add_post("/api/v1/quotes", create_quote)
    app.router.add_post("/api/v1/recipients", create_recipient)
    app.router.add_post("/api/v1/transfers", create_transfer)
    app.router.add_get("/api/v1/transfers", list_transfers)
    app.router.add_get("/api/v1/transfers/{id}", get_transfer)
    app.router.add_post("/api/v1/transfers/{id}/retry-payout", retry_payout)
