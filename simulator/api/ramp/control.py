"""/_sim/ramp: the provider sandbox's controls, proxied (docs/admin-api.md "Ramp provider
controls"). Transfer controls take OUR transfer id (`rtr_…`) and customer controls OUR customer
id (`rcu_…`); both are translated to the provider's ids, and a provider id is passed through.
The sandbox's answer comes back as `data`; its 400/404/409 become ours."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel

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


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


def _answer(answer: Any) -> web.Response:
    return data_response(schemas.SandboxAnswer(answer))


async def get_ramp(request: web.Request) -> web.Response:
    described = request.app[RAMP].controls.describe(str(request.url.origin()))
    return data_response(
        schemas.RampInfo(
            provider=described.provider,
            url=described.url,
            in_process=described.in_process,
            webhook_url=described.webhook_url,
            webhook_secret=described.webhook_secret,
        )
    )


async def get_state(request: web.Request) -> web.Response:
    return _answer(await request.app[RAMP].controls.forward("GET", "state"))


def _transfer_control(action: str, model: type[BaseModel] | None) -> Any:
    async def handler(request: web.Request) -> web.Response:
        body = _dump(await parse_body(request, model)) if model is not None else None
        controls = request.app[RAMP].controls
        return _answer(
            await controls.transfer_action(request.match_info["transfer_id"], action, body)
        )

    handler.__name__ = f"transfer_{action.replace('-', '_')}"
    return handler


def _setting(method: str, path: str, model: type[BaseModel]) -> Any:
    async def handler(request: web.Request) -> web.Response:
        body = _dump(await parse_body(request, model))
        return _answer(await request.app[RAMP].controls.forward(method, path, body))

    handler.__name__ = f"set_{path.replace('/', '_')}"
    return handler


async def kyc_outcome(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.KycOutcome)
    controls = request.app[RAMP].controls
    return _answer(await controls.kyc_outcome(request.match_info["customer_id"], _dump(body)))


async def reset(request: web.Request) -> web.Response:
    return _answer(await request.app[RAMP].controls.forward("POST", "reset"))


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
