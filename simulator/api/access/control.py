"""/_sim/keys, /_sim/limits and /_sim/faults: API keys, rate-limit tiers and fault switches."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from rfqkit.timestamps import isoformat
from simulator.api.access.control_schemas import (
    FaultState,
    FaultUpdate,
    KeyCreate,
    KeyCreated,
    KeyList,
    KeyRecord,
    Limits,
    LimitsUpdate,
)
from simulator.api.http.appkeys import ACCESS, INJECTED_ERRORS
from simulator.api.http.forwarding import repeated
from simulator.api.http.parsing import parse_body
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.errors import InternalError, InvalidRequest, NotFound, PayloadTooLarge
from simulator.services.access.admin import create_key, replace_limits
from simulator.services.access.area import AccessArea
from simulator.services.access.keys import ApiKey, KeyStatus
from simulator.settings import LimitSettings


def _record(services: AccessArea, key: ApiKey) -> dict[str, Any]:
    return {
        "key_id": key.key_id,
        "partner_id": key.partner_id,
        "partner": services.keys.partners[key.partner_id].name,
        "name": key.name,
        "environment": key.environment,
        "scopes": sorted(key.scopes),
        "tier": key.tier,
        "status": key.status,
        "created_at": isoformat(key.created_at),
        "maker_wallet": key.maker_wallet,
    }


async def post_key(request: web.Request) -> web.Response:
    body = await parse_body(request, KeyCreate)
    area = request.app[ACCESS]
    key, full = create_key(
        area,
        partner=body.partner,
        environment=body.environment,
        scopes=frozenset(body.scopes),
        name=body.name,
        tier=body.tier,
        maker_wallet=body.maker_wallet,
    )
    created = KeyCreated.model_validate({**_record(area, key), "key": full})
    return data_response(created, status=201)


async def list_keys(request: web.Request) -> web.Response:
    services = request.app[ACCESS]
    records = [KeyRecord.model_validate(_record(services, k)) for k in services.keys.keys.values()]
    return data_response(KeyList(keys=records))


def _status_handler(status: KeyStatus) -> Any:
    async def handler(request: web.Request) -> web.Response:
        services = request.app[ACCESS]
        key = services.keys.set_status(request.match_info["key_id"], status)
        return data_response(KeyRecord.model_validate(_record(services, key)))

    return handler


def _limits(limits: LimitSettings) -> Limits:
    return Limits.model_validate(limits.model_dump())


async def get_limits(request: web.Request) -> web.Response:
    return data_response(_limits(request.app[ACCESS].limits))


async def put_limits(request: web.Request) -> web.Response:
    body = await parse_body(request, LimitsUpdate)
    update = body.model_dump(exclude_none=True, exclude={"reset_windows"})
    limits = replace_limits(request.app[ACCESS], update, reset_windows=body.reset_windows)
    return data_response(_limits(limits))


def _faults(services: AccessArea) -> FaultState:
    faults = services.faults
    return FaultState(
        chain_unreachable=sorted(faults.chain_unreachable),
        venue_paused=faults.venue_paused,
        internal_errors=faults.internal_errors,
        indexer_paused=sorted(faults.indexer_paused),
    )


async def get_faults(request: web.Request) -> web.Response:
    return data_response(_faults(request.app[ACCESS]))


async def post_faults(request: web.Request) -> web.Response:
    body = await parse_body(request, FaultUpdate)
    request.app[ACCESS].faults.update(
        chain_unreachable=body.chain_unreachable,
        venue_paused=body.venue_paused,
        internal_errors=body.internal_errors,
        indexer_paused=body.indexer_paused,
    )
    if body.internal_errors is not None:
        _venue_count(request, body.internal_errors)
    return data_response(_faults(request.app[ACCESS]))


async def delete_faults(request: web.Request) -> web.Response:
    request.app[ACCESS].faults.clear()
    _venue_count(request, 0)
    return data_response(_faults(request.app[ACCESS]))


def _venue_count(request: web.Request, count: int) -> None:
    """Several instances: the venue's count of injected 500s, set once, by the instance that
    serves the change first (the others are told it again: api/http/forwarding.py)."""
    venue = request.app.get(INJECTED_ERRORS)
    if venue is not None and not repeated(request):
        venue.set(count)


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim",))

    body_errors = (InvalidRequest, PayloadTooLarge, InternalError)
    add(
        "POST",
        "/_sim/keys",
        post_key,
        "simCreateKey",
        "Create an API key (full key shown once)",
        body=KeyCreate,
        responses={201: KeyCreated},
        errors=body_errors,
        changes_configuration=True,
    )
    add(
        "GET",
        "/_sim/keys",
        list_keys,
        "simListKeys",
        "List keys (no secrets)",
        responses={200: KeyList},
        errors=(InternalError,),
    )
    for status, verb in (("suspended", "suspend"), ("revoked", "revoke"), ("active", "activate")):
        add(
            "POST",
            f"/_sim/keys/{{key_id}}/{verb}",
            _status_handler(status),  # type: ignore[arg-type]
            f"sim{verb.title()}Key",
            f"Set a key's status to {status}",
            responses={200: KeyRecord},
            errors=(InvalidRequest, NotFound, InternalError),
            changes_configuration=True,
        )
    add(
        "GET",
        "/_sim/limits",
        get_limits,
        "simGetLimits",
        "Rate-limit tiers and caps",
        responses={200: Limits},
        errors=(InternalError,),
    )
    add(
        "PUT",
        "/_sim/limits",
        put_limits,
        "simSetLimits",
        "Change rate-limit tiers and caps",
        body=LimitsUpdate,
        responses={200: Limits},
        errors=body_errors,
        changes_configuration=True,
        placement="every",  # each instance's windows (reset_windows) are its own
    )
    add(
        "GET",
        "/_sim/faults",
        get_faults,
        "simGetFaults",
        "Fault switches",
        responses={200: FaultState},
        errors=(InternalError,),
    )
    add(
        "POST",
        "/_sim/faults",
        post_faults,
        "simSetFaults",
        "Turn fault switches on or off",
        body=FaultUpdate,
        responses={200: FaultState},
        errors=body_errors,
        placement="every",
    )
    add(
        "DELETE",
        "/_sim/faults",
        delete_faults,
        "simClearFaults",
        "Turn every fault switch off",
        responses={200: FaultState},
        errors=(InternalError,),
        placement="every",
    )
