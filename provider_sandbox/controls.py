"""The /sandbox controls: no key (loopback only), never subject to reachability or latency."""

from __future__ import annotations

import html
from decimal import Decimal
from typing import Any

from aiohttp import web

from provider_sandbox import booking, interventions, kyc
from provider_sandbox.api import capabilities, read_json
from provider_sandbox.appkeys import SANDBOX
from provider_sandbox.core import Sandbox
from provider_sandbox.errors import SandboxConflict, SandboxNotFound
from provider_sandbox.rates import shift_factor
from provider_sandbox.schemas import (
    AdvanceIn,
    ClockIn,
    ConfigIn,
    FailIn,
    OutcomeIn,
    PayInIn,
    ReachabilityIn,
    ShiftIn,
    SwitchesIn,
    WebhooksIn,
    parse,
)
from provider_sandbox.state import SETTLED, SandboxTransfer
from provider_sandbox.views import balance_view, customer_view, recipient_view, transfer_view
from rfqkit.timestamps import isoformat_unix


def _sandbox(request: web.Request) -> Sandbox:
    return request.app[SANDBOX]


def _transfer_response(sandbox: Sandbox, transfer: SandboxTransfer) -> web.Response:
    return web.json_response({"transfer": transfer_view(transfer, sandbox.state, sandbox.config)})


async def refresh_all(sandbox: Sandbox) -> None:
    for transfer in list(sandbox.state.transfers.values()):
        if transfer.status not in SETTLED:
            await sandbox.engine.refresh(transfer)
    sandbox.webhooks.release_due()


def config_view(sandbox: Sandbox) -> dict[str, Any]:
    settings = sandbox.state.settings
    return {
        "reviewDelaySeconds": settings.review_delay_s,
        "stepDelaySeconds": settings.step_delay_s,
        "maxBuy": f"{settings.max_buy:f}",
        "apiLatencyMs": settings.api_latency_ms,
    }


def state_view(sandbox: Sandbox) -> dict[str, Any]:
    state, config, now = sandbox.state, sandbox.config, sandbox.clock.time()
    settings = state.settings
    customers = []
    for customer in state.customers.values():
        review = kyc.review_view(customer, now, settings.max_buy, config.fiat)
        customers.append(
            {**customer_view(customer), "review": review, "balance": balance_view(customer, config)}
        )
    return {
        "now": isoformat_unix(now),
        "clock": {"shared": sandbox.clock.shared, "offsetSeconds": sandbox.clock.offset_seconds},
        "capabilities": capabilities(sandbox),
        "config": config_view(sandbox),
        "webhooks": {
            "url": sandbox.webhooks.url,
            "mode": settings.webhook_mode,
            "delaySeconds": settings.webhook_delay_s,
            "log": [
                {
                    "id": r.event_id,
                    "transferId": r.transfer_id,
                    "status": r.status,
                    "created": isoformat_unix(r.created),
                    "outcome": r.outcome,
                    "responseStatus": r.response_status,
                    "error": r.error,
                }
                for r in state.webhooks
            ],
        },
        "reachable": settings.reachable,
        "rates": {"mid": f"{sandbox.mid():f}", "shift": f"{settings.rate_shift:f}"},
        "customers": customers,
        "recipients": [recipient_view(r) for r in state.recipients.values()],
        "transfers": [transfer_view(t, state, config) for t in state.transfers.values()],
        "calls": dict(sorted(state.calls.items())),
    }


async def get_state(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    await refresh_all(sandbox)
    return web.json_response(state_view(sandbox))


async def pay_in(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    transfer = booking.transfer(sandbox, request.match_info["id"])
    body = parse(PayInIn, await read_json(request))
    await interventions.pay_in(sandbox, transfer, body.mode, body.amount)
    return _transfer_response(sandbox, transfer)


async def advance(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    transfer = booking.transfer(sandbox, request.match_info["id"])
    body = parse(AdvanceIn, await read_json(request))
    await interventions.advance(sandbox, transfer, body.to)
    return _transfer_response(sandbox, transfer)


async def stall(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    transfer = booking.transfer(sandbox, request.match_info["id"])
    await interventions.stall(sandbox, transfer)
    return _transfer_response(sandbox, transfer)


async def fail(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    transfer = booking.transfer(sandbox, request.match_info["id"])
    body = parse(FailIn, await read_json(request))
    await interventions.fail(sandbox, transfer, body.refund)
    return _transfer_response(sandbox, transfer)


async def cancel(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    transfer = booking.transfer(sandbox, request.match_info["id"])
    await interventions.cancel(sandbox, transfer)
    return _transfer_response(sandbox, transfer)


async def put_switches(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(SwitchesIn, await read_json(request))
    settings = sandbox.state.settings
    if body.enabled is not None:
        settings.enabled = body.enabled
    if body.sides is not None:
        for side in ("buy", "sell"):
            value = getattr(body.sides, side)
            if value is not None:
                settings.sides[side] = value
    if body.chains is not None:
        settings.chains = list(body.chains)
    if body.sandbox_chains is not None:
        settings.sandbox_chains = list(body.sandbox_chains)
    if body.business_profile_sells is not None:
        settings.business_profile_sells = body.business_profile_sells
    return web.json_response({"capabilities": capabilities(sandbox)})


async def put_webhooks(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(WebhooksIn, await read_json(request))
    settings = sandbox.state.settings
    settings.webhook_mode = body.mode
    settings.webhook_delay_s = body.delay_seconds
    return web.json_response(
        {"webhooks": {"mode": settings.webhook_mode, "delaySeconds": settings.webhook_delay_s}}
    )


async def put_reachability(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(ReachabilityIn, await read_json(request))
    sandbox.state.settings.reachable = body.reachable
    return web.json_response({"reachable": body.reachable})


async def shift_rates(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(ShiftIn, await read_json(request))
    settings = sandbox.state.settings
    settings.rate_shift = shift_factor(settings.rate_shift, body.percent)
    return web.json_response({"mid": f"{sandbox.mid():f}", "shift": f"{settings.rate_shift:f}"})


async def put_config(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(ConfigIn, await read_json(request))
    settings = sandbox.state.settings
    if body.review_delay_seconds is not None:
        settings.review_delay_s = body.review_delay_seconds
    if body.step_delay_seconds is not None:
        settings.step_delay_s = body.step_delay_seconds
    if body.max_buy is not None:
        settings.max_buy = Decimal(body.max_buy)
    if body.api_latency_ms is not None:
        settings.api_latency_ms = body.api_latency_ms
    return web.json_response({"config": config_view(sandbox)})


async def kyc_outcome(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    customer = booking.customer(sandbox, request.match_info["id"])
    body = parse(OutcomeIn, await read_json(request))
    now = sandbox.clock.time()
    try:
        kyc.decide(customer, body.outcome, now)
    except kyc.ReviewConflict as exc:
        raise SandboxConflict(str(exc)) from None
    settings = sandbox.state.settings
    review = kyc.review_view(customer, now, settings.max_buy, sandbox.config.fiat)
    return web.json_response({"review": review})


async def advance_clock(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    body = parse(ClockIn, await read_json(request))
    if sandbox.clock.shared:
        raise SandboxConflict("The sandbox shares the simulator's clock; advance it there")
    now = sandbox.clock.advance(body.seconds)
    await refresh_all(sandbox)
    return web.json_response(
        {"now": isoformat_unix(now), "offsetSeconds": sandbox.clock.offset_seconds}
    )


async def reset(request: web.Request) -> web.Response:
    _sandbox(request).reset()
    return web.json_response({"reset": True})


def _by_token(sandbox: Sandbox, token: str) -> Any:
    found = next((c for c in sandbox.state.customers.values() if c.verify_token == token), None)
    if found is None:
        raise SandboxNotFound("This verification link is not valid")
    return found


async def verify_page(request: web.Request) -> web.Response:
    """The provider-hosted verification page kyc/link points at: a form that submits documents
    as the API would (the document number's test values apply)."""
    sandbox = _sandbox(request)
    customer = _by_token(sandbox, request.match_info["token"])
    status = kyc.status_at(customer.review, sandbox.clock.time())
    name = html.escape(f"{customer.first_name} {customer.last_name}")
    page = (
        f"<!doctype html><title>{html.escape(sandbox.config.display_name)}</title>"
        f"<h1>Verify your identity</h1><p>{name}: review {status}</p>"
        '<form method="post"><label>Document number <input name="number"></label>'
        "<button>Submit documents</button></form>"
    )
    return web.Response(text=page, content_type="text/html")


async def verify_submit(request: web.Request) -> web.Response:
    sandbox = _sandbox(request)
    customer = _by_token(sandbox, request.match_info["token"])
    form = await request.post()
    number = str(form.get("number") or "PAGE-UPLOAD")
    status = kyc.status_at(customer.review, sandbox.clock.time())
    if status in ("awaiting_review", "approved"):
        raise SandboxConflict(f"The review is {status}; no new documents are needed")
    booking.submit_review(sandbox, customer, number)
    raise web.HTTPSeeOther(location=str(request.url))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/sandbox/state", get_state)
    app.router.add_post("/sandbox/transfers/{id}/pay-in", pay_in)
    app.router.add_post("/sandbox/transfers/{id}/advance", advance)
    app.router.add_post("/sandbox/transfers/{id}/stall", stall)
    app.router.add_post("/sandbox/transfers/{id}/fail", fail)
    app.router.add_post("/sandbox/transfers/{id}/cancel", cancel)
    app.router.add_put("/sandbox/switches", put_switches)
    app.router.add_put("/sandbox/webhooks", put_webhooks)
    app.router.add_put("/sandbox/reachability", put_reachability)
    app.router.add_post("/sandbox/rates/shift", shift_rates)
    app.router.add_put("/sandbox/config", put_config)
    app.router.add_post("/sandbox/customers/{id}/kyc/outcome", kyc_outcome)
    app.router.add_post("/sandbox/clock/advance", advance_clock)
    app.router.add_post("/sandbox/reset", reset)
    app.router.add_get("/sandbox/verify/{token}", verify_page)
    app.router.add_post("/sandbox/verify/{token}", verify_submit)
