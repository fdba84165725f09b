"""HTTP handlers of the webhook registry, /v1/webhooks (shared by v1 and v2, spec 1-rfq-v2
"Versioning" item 3, so listed in the v2 and the v1 OpenAPI documents): parse, call the service,
render. Registering an endpoint is a v1 POST that creates, so it honours Idempotency-Key."""

from __future__ import annotations

from aiohttp import web

from simulator.api.http.appkeys import CALLER, WEBHOOKS
from simulator.api.http.parsing import parse_body
from simulator.api.http.responses import data_response
from simulator.api.http.routes import Access, RouteTable
from simulator.api.webhooks import schemas
from simulator.errors import (
    Forbidden,
    InternalError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    Unauthorized,
)

MANAGE = Access(scope="webhooks:manage", keyless=False)


def _partner_id(request: web.Request) -> str:
    partner_id = request[CALLER].partner_id
    if partner_id is None:  # the access middleware already refuses keyless callers
        raise Unauthorized("An API key is required", details={"reason": "api_key_required"})
    return partner_id


async def create_endpoint(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.WebhookCreate)
    endpoint = request.app[WEBHOOKS].registry.create(
        _partner_id(request), body.url, list(body.event_types)
    )
    created = schemas.WebhookEndpointCreated.model_validate(endpoint)
    return data_response(created, status=201)


async def list_endpoints(request: web.Request) -> web.Response:
    endpoints = request.app[WEBHOOKS].registry.owned_by(_partner_id(request))
    return data_response(
        schemas.WebhookEndpointList([schemas.WebhookEndpoint.model_validate(e) for e in endpoints])
    )


async def delete_endpoint(request: web.Request) -> web.Response:
    endpoint = request.app[WEBHOOKS].delete_endpoint(
        _partner_id(request), request.match_info["endpoint_id"]
    )
    return data_response(schemas.WebhookDeleted(id=endpoint.endpoint_id, deleted=True))


KEY_ERRORS = (Unauthorized, Forbidden, RateLimited, InternalError)


def add_routes(table: RouteTable) -> None:
    add = table.adder(
        "v2",
        ("webhooks",),
        security=("bearerKey", "apiKeyHeader"),
        access=MANAGE,
        also_in=("v1",),
    )

    add(
        "POST",
        "/v1/webhooks",
        create_endpoint,
        "webhooksCreate",
        "Register a webhook endpoint; the signing secret is returned only here",
        body=schemas.WebhookCreate,
        idempotent=True,
        responses={201: schemas.WebhookEndpointCreated},
        errors=(InvalidRequest, PayloadTooLarge, *KEY_ERRORS),
        changes_configuration=True,
    )
    add(
        "GET",
        "/v1/webhooks",
        list_endpoints,
        "webhooksList",
        "The partner's webhook endpoints, without signing secrets",
        responses={200: schemas.WebhookEndpointList},
        errors=KEY_ERRORS,
    )
    add(
        "DELETE",
        "/v1/webhooks/{endpoint_id}",
        delete_endpoint,
        "webhooksDelete",
        "Delete a webhook endpoint (404 when unknown or another partner's)",
        responses={200: schemas.WebhookDeleted},
        errors=(NotFound, *KEY_ERRORS),
        changes_configuration=True,
    )
