"""GET /v1/status (public) and GET /v1/corridors (quotes:read): parse, call the v1 area, render.
GET /v1/health and /v1/openapi.json are api/meta's; /v1/webhooks is api/webhooks'."""

from __future__ import annotations

from aiohttp import web

from simulator.api.http.appkeys import CALLER, V1
from simulator.api.http.parsing import parse_query
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.v1 import schemas
from simulator.api.v1.access import V1_KEY_ERRORS, v1_keyed
from simulator.errors import InternalError, InvalidRequest, RateLimited
from simulator.services.v1.corridors import list_corridors


async def get_status(request: web.Request) -> web.Response:
    status = await request.app[V1].status.status()
    return data_response(schemas.ServiceStatus.model_validate(status), status=status.http_status)


async def get_corridors(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.CorridorsQuery)
    listed = list_corridors(request.app[V1].venue, request[CALLER], query.chain_id)
    return data_response(schemas.CorridorList.model_validate(listed))


def add_routes(table: RouteTable) -> None:
    table.adder("v1", ("status",))(
        "GET",
        "/v1/status",
        get_status,
        "v1Status",
        "Service status: 200 operational or degraded, 503 down (a critical dependency is "
        "unavailable), with per-dependency checks",
        responses={200: schemas.ServiceStatus, 503: schemas.ServiceStatus},
        errors=(RateLimited, InternalError),
    )
    table.adder("v1", ("corridors",), **v1_keyed("quotes:read"))(
        "GET",
        "/v1/corridors",
        get_corridors,
        "v1Corridors",
        "Corridors of one chain, or of every chain of the key's environment",
        query=schemas.CorridorsQuery,
        responses={200: schemas.CorridorList},
        errors=(InvalidRequest, *V1_KEY_ERRORS),
    )
