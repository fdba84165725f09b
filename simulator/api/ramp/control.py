"""/_sim/ramp: the provider sandbox's controls, proxied (docs/admin-api.md "Ramp provider
controls"). Transfer controls take OUR transfer id (`rtr_…`) and customer controls OUR customer
id (`rcu_…`); both are translated to the provider's ids, and a provider id is passed through.
The sandbox's answer comes back as `data`; its 400/404/409 become ours."""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web
from pydantic import BaseModel

from simulator.adapters.ramp.provider_client import HttpRampProvider
from simulator.api.http.appkeys import RAMP
from simulator.api.http.parsing import parse_body
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.ramp import control_schemas as schemas
from simulator.errors import (
    Conflict,
    InternalError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UpstreamError,
)
from simulator.runtime.provider import PROVIDER, webhook_url
from simulator.services.ramp.failures import provider_unreachable
from simulator.services.ramp.ports import ProviderError


class ProviderIdLookup(Protocol):
    """What the transfer reads offer here: the provider's id of one of our transfers."""

    def provider_transfer_id(self, transfer_id: str) -> str | None: ...


def _client(request: web.Request) -> HttpRampProvider:
    handle = request.app[PROVIDER].handle
    if handle is None:
        raise UpstreamError(
            "The ramp provider is not running", details={"reason": "provider_unreachable"}
        )
    return handle.client


async def _forward(request: web.Request, method: str, path: str, body: Any = None) -> Any:
    client = _client(request)
    try:
        status, answer = await client.control(method, path, body)
    except ProviderError as exc:
        raise provider_unreachable(client.provider_id) from exc
    if 200 <= status < 300 and answer is not None:
        return answer
    error = (answer or {}).get("error")
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) and message else f"sandbox answered {status}"
    if status == 400:
        raise InvalidRequest(text, details={"reason": "sandbox_refused"})
    if status == 404:
        raise NotFound(text)
    if status == 409:
        raise Conflict(text)
    raise UpstreamError(text, details={"reason": "sandbox_failed", "status": status})


async def _provider_transfer_id(request: web.Request, transfer_id: str) -> str:
    ramp = request.app[RAMP]
    reads = ramp.reads
    if reads is not None and hasattr(reads, "provider_transfer_id"):
        lookup: ProviderIdLookup = reads
        found = lookup.provider_transfer_id(transfer_id)
        if found is not None:
            return found
    # Our transfer id is the provider's `reference`: ask the provider (also covers a transfer
    # service that does not know the id); anything else is taken to be the provider's own id.
    client = _client(request)
    try:
        remote = await client.transfer_by_reference(transfer_id)
    except ProviderError as exc:
        raise provider_unreachable(client.provider_id) from exc
    return remote.id if remote is not None else transfer_id


def _provider_customer_id(request: web.Request, customer_id: str) -> str:
    for record in request.app[RAMP].customers.records():
        if record.id == customer_id:
            if record.provider_customer_id is None:
                raise Conflict(
                    f"Customer {customer_id} has no provider profile",
                    details={"reason": "no_provider_profile"},
                )
            return record.provider_customer_id
    return customer_id


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


def _answer(answer: Any) -> web.Response:
    return data_response(schemas.SandboxAnswer(answer))


async def get_ramp(request: web.Request) -> web.Response:
    ramp = request.app[RAMP]
    handle = request.app[PROVIDER].handle
    provider_id = ramp.settings.provider_id
    return data_response(
        schemas.RampInfo(
            provider=provider_id,
            url=ramp.sandbox_url,
            in_process=handle is not None and handle.running is not None,
            webhook_url=webhook_url(str(request.url.origin()), provider_id),
            webhook_secret=ramp.webhook_secret,
        )
    )


async def get_state(request: web.Request) -> web.Response:
    return _answer(await _forward(request, "GET", "state"))


def _transfer_control(action: str, model: type[BaseModel] | None) -> Any:
    async def handler(request: web.Request) -> web.Response:
        body = _dump(await parse_body(request, model)) if model is not None else None
        remote = await _provider_transfer_id(request, request.match_info["transfer_id"])
        return _answer(await _forward(request, "POST", f"transfers/{remote}/{action}", body))

    handler.__name__ = f"transfer_{action.replace('-', '_')}"
    return handler


def _setting(method: str, path: str, model: type[BaseModel]) -> Any:
    async def handler(request: web.Request) -> web.Response:
        body = _dump(await parse_body(request, model))
        return _answer(await _forward(request, method, path, body))

    handler.__name__ = f"set_{path.replace('/', '_')}"
    return handler


async def kyc_outcome(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.KycOutcome)
    remote = _provider_customer_id(request, request.match_info["customer_id"])
    return _answer(await _forward(request, "POST", f"customers/{remote}/kyc/outcome", _dump(body)))


async def reset(request: web.Request) -> web.Response:
    return _answer(await _forward(request, "POST", "reset"))


BODY_ERRORS = (InvalidRequest, PayloadTooLarge, UpstreamError, InternalError)


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim", "ramp"))
    add(
        "GET",
        "/_sim/ramp",
        get_ramp,
        "simRamp",
        "The ramp provider: id, sandbox URL, where its webhooks go",
        responses={200: schemas.RampInfo},
        errors=(InternalError,),
    )
    add(
        "GET",
        "/_sim/ramp/state",
        get_state,
        "simRampState",
        "The sandbox's state: customers, transfers, switches, webhook log, API call counts",
        responses={200: schemas.SandboxAnswer},
        errors=(UpstreamError, InternalError),
    )
    transfer_controls: tuple[tuple[str, type[BaseModel] | None, str], ...] = (
        ("pay-in", schemas.PayIn, "Pay in: a bank transfer (buy) or the token deposit (sell)"),
        ("advance", schemas.Advance, "Move the provider transfer one step, or to `to`"),
        ("stall", None, "Stop automatic progress at funds_converted"),
        ("fail", schemas.Fail, "Fail the transfer, then refund when asked"),
        ("cancel", None, "Cancel before funds arrive"),
    )
    for action, model, summary in transfer_controls:
        add(
            "POST",
            f"/_sim/ramp/transfers/{{transfer_id}}/{action}",
            _transfer_control(action, model),
            "simRampTransfer" + "".join(p.title() for p in action.split("-")),
            summary + " (our transfer id or the provider's)",
            body=model,
            responses={200: schemas.SandboxAnswer},
            errors=(*BODY_ERRORS, NotFound, Conflict),
        )
    settings: tuple[tuple[str, str, type[BaseModel], str, str], ...] = (
        ("PUT", "switches", schemas.Switches, "simRampSwitches", "Live capability switches"),
        ("PUT", "webhooks", schemas.WebhookMode, "simRampWebhooks", "Deliver, drop or delay"),
        (
            "PUT",
            "reachability",
            schemas.Reachability,
            "simRampReachability",
            "Make the provider API unreachable (connections closed unanswered)",
        ),
        ("POST", "rates/shift", schemas.RateShift, "simRampRatesShift", "Move the mid rate now"),
        (
            "PUT",
            "config",
            schemas.SandboxSettings,
            "simRampConfig",
            "Review and step delays, the deposit cap, API latency",
        ),
    )
    for method, path, model, op_id, summary in settings:
        add(
            method,
            f"/_sim/ramp/{path}",
            _setting(method, path, model),
            op_id,
            summary,
            body=model,
            responses={200: schemas.SandboxAnswer},
            errors=BODY_ERRORS,
        )
    add(
        "POST",
        "/_sim/ramp/customers/{customer_id}/kyc/outcome",
        kyc_outcome,
        "simRampKycOutcome",
        "Decide a pending review now (our customer id or the provider's)",
        body=schemas.KycOutcome,
        responses={200: schemas.SandboxAnswer},
        errors=(*BODY_ERRORS, NotFound, Conflict),
    )
    add(
        "POST",
        "/_sim/ramp/reset",
        reset,
        "simRampReset",
        "Forget the sandbox's state, switches and config (the simulator's records stay)",
        responses={200: schemas.SandboxAnswer},
        errors=(UpstreamError, InternalError),
    )
