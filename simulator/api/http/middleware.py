"""Request ids and error rendering, in one place.

Every response carries `X-Request-Id` (set in `on_response_prepare`, so it also reaches WebSocket
handshakes and aiohttp's own 404/405/413 pages); every error, ours or aiohttp's or an unexpected
exception, leaves as the spec's envelope with `request_id` equal to the header, except on the
rates feed's paths, whose errors are `{error: "<string>"}` (spec 3 "Rates feed errors")."""

from __future__ import annotations

import json
import logging

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.typedefs import Handler

from simulator.api.http.appkeys import ERROR_STYLES, RANDOM, REQUEST_ID
from simulator.api.http.policy import operation_of
from simulator.api.http.routes import Operation
from simulator.api.http.server_timing import mark_started
from simulator.errors import (
    InternalError,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServiceError,
)

log = logging.getLogger("rfqsim.api")


def request_id_of(request: web.Request) -> str:
    existing = request.get(REQUEST_ID)
    if isinstance(existing, str):
        return existing
    request_id = request.app[RANDOM].new_id("req")
    request[REQUEST_ID] = request_id
    return request_id


def render_error(
    error: ServiceError, request_id: str, operation: Operation | None = None
) -> web.Response:
    """The envelope; an object member is written through the wire model `operation` declares."""
    body: dict[str, object] = {
        "code": error.code,
        "message": error.message,
        "request_id": request_id,
    }
    if error.details is not None:
        body["details"] = error.details
    members = operation.error_members if operation is not None else {}
    for name, value in error.extra.items():
        if name in error.object_members:
            value = members[name].model_validate(value).model_dump(mode="json", by_alias=True)
        body.setdefault(name, value)  # never shadows code, message, request_id or details
    response = web.Response(
        body=json.dumps({"error": body}, separators=(",", ":")).encode(),
        status=error.status,
        content_type="application/json",
        headers=error.headers,
    )
    return response


def feed_message(error: ServiceError) -> str:
    """The feed's one error string: the message, plus the fields a schema failure named."""
    issues = (error.details or {}).get("issues")
    if not isinstance(issues, list) or not issues:
        return error.message
    named = "; ".join(
        f"{issue.get('field') or 'query'}: {issue.get('message')}"
        for issue in issues
        if isinstance(issue, dict)
    )
    return f"{error.message}: {named}" if named else error.message


def render_feed_error(error: ServiceError) -> web.Response:
    """`{error: "<string>"}` with the error's status and headers (Allow, Retry-After), never
    cached: a failure must not outlive its cause in any cache on the way."""
    return web.Response(
        body=json.dumps({"error": feed_message(error)}, separators=(",", ":")).encode(),
        status=error.status,
        content_type="application/json",
        headers={**error.headers, "Cache-Control": "no-store"},
    )


def _render(request: web.Request, error: ServiceError, request_id: str) -> web.Response:
    styles = request.app.get(ERROR_STYLES) or {}
    if styles.get(request.path) == "feed":
        return render_feed_error(error)
    return render_error(error, request_id, operation_of(request))


def _from_http_exception(exc: web.HTTPException) -> ServiceError:
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(exc.allowed_methods))
        return MethodNotAllowed(
            f"Method {exc.method} not allowed; allowed: {allowed}", headers={"Allow": allowed}
        )
    if isinstance(exc, web.HTTPNotFound):
        return NotFound("No such resource")
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        return PayloadTooLarge("Request body too large")
    if 400 <= exc.status < 500:
        return InvalidRequest(exc.reason)
    return InternalError()


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    mark_started(request)
    request_id = request_id_of(request)
    try:
        return await handler(request)
    except ServiceError as error:
        return _render(request, error, request_id)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _render(request, _from_http_exception(exc), request_id)
    except HttpProcessingError:
        # The body's framing broke while the handler read it (a bad chunk, a short body):
        # the client's fault. The exception's text may quote the request's bytes: not echoed.
        return _render(
            request,
            InvalidRequest(
                "The request body's framing is malformed", details={"reason": "bad_body_framing"}
            ),
            request_id,
        )
    except ConnectionError:
        raise  # the client went away: nobody to answer, nothing of ours broke
    except Exception:
        log.exception(
            "unhandled error in %s %s (request %s)", request.method, request.path, request_id
        )
        return _render(request, InternalError(), request_id)


async def add_request_id_header(request: web.Request, response: web.StreamResponse) -> None:
    response.headers["X-Request-Id"] = request_id_of(request)
