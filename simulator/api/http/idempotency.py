"""The Idempotency-Key header on operations declared `idempotent=True` (every v1 POST that
creates): one mechanism for all of them, so no handler deals with the header itself. The rules
and the state are services/shared/idempotency.py's; this layer reads the header and the body,
and captures and replays responses.

Runs after the access middleware: a key is scoped to the authenticated caller, and 401, 403 and
429 are answered before any key is looked at (and never stored)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler
from multidict import CIMultiDict

from simulator.api.http.appkeys import CALLER, IDEMPOTENCY, OPERATIONS, REQUEST_ID
from simulator.api.http.middleware import render_error, request_id_of
from simulator.api.http.policy import operation_of
from simulator.errors import Conflict, InvalidRequest, ServiceError
from simulator.services.shared.idempotency import (
    MAX_KEY_LENGTH,
    IdempotencyScope,
    StoredResponse,
    is_stored,
    is_valid_key,
    request_fingerprint,
)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"  # Stripe's name: set on a replayed response
# Set per response by on_response_prepare, never part of what is stored and replayed.
_PER_RESPONSE = frozenset({"x-request-id", "content-length", "date", "server"})


def _presented_key(request: web.Request) -> str | None:
    values = request.headers.getall(HEADER, [])
    if not values:
        return None
    if len(values) > 1 or not is_valid_key(values[0]):
        raise InvalidRequest(
            f"{HEADER} must be one value of 1 to {MAX_KEY_LENGTH} printable ASCII characters",
            details={"reason": "idempotency_key_invalid"},
        )
    return values[0]


def _scope(request: web.Request, key: str) -> IdempotencyScope:
    caller = request.get(CALLER)
    identity = caller.identity if caller is not None else f"ip:{request.remote or 'unknown'}"
    return IdempotencyScope(caller=identity, method=request.method, path=request.path, key=key)


def _replay(request: web.Request, stored: StoredResponse) -> web.Response:
    # The first answer, byte for byte, under the first request's id (an error body names it).
    request[REQUEST_ID] = stored.request_id
    response = web.Response(
        body=stored.body, status=stored.status, headers=CIMultiDict(stored.headers)
    )
    response.headers[REPLAYED_HEADER] = "true"
    return response


def _stored(request: web.Request, response: web.StreamResponse) -> StoredResponse | None:
    if not isinstance(response, web.Response) or not isinstance(response.body, bytes):
        return None  # a streamed answer cannot be replayed: the key is released instead
    if not is_stored(response.status):
        return None
    headers = tuple(
        (name, value)
        for name, value in response.headers.items()
        if name.lower() not in _PER_RESPONSE
    )
    return StoredResponse(
        status=response.status,
        headers=headers,
        body=response.body,
        request_id=request_id_of(request),
    )


@web.middleware
async def idempotency_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    route_name = request.match_info.route.name
    operation = request.app[OPERATIONS].get(route_name) if route_name else None
    if operation is None or not operation.idempotent:
        return await handler(request)
    key = _presented_key(request)
    if key is None:
        return await handler(request)
    store = request.app[IDEMPOTENCY]
    claimed, record = await store.begin(_scope(request, key))
    if not claimed:
        if record.response is None:
            raise Conflict(
                f"A request with this {HEADER} is still being processed; retry later",
                details={"reason": "idempotency_key_in_flight"},
            )
        fingerprint = request_fingerprint(request.query_string, await request.read())
        if fingerprint != record.fingerprint:
            raise InvalidRequest(
                f"This {HEADER} was used with another request body",
                details={"reason": "idempotency_key_reused"},
            )
        return _replay(request, record.response)
    try:
        # Claimed before the body is read: the request is in flight from its headers on, so a
        # retry sent while a slow body is still uploading is 409, not a second execution.
        store.fingerprinted(record, request_fingerprint(request.query_string, await request.read()))
        try:
            response: web.StreamResponse = await handler(request)
        except ServiceError as error:
            # Rendered here, by the one renderer, so the bytes stored are the bytes sent.
            response = render_error(error, request_id_of(request), operation_of(request))
        stored = _stored(request, response)
        if stored is not None:
            await store.finish(record, stored)
        return response
    finally:
        store.release(record)  # no-op once finished; frees the key after anything else
