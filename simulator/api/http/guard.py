"""The local guard's middleware (rfqkit/local_guard.py says what it defends against): every
request for a Host name that a web page could have re-pointed at this machine is refused, and a
state-changing request another site's page sent to a route whose policy says so (the control
API, `Operation.same_origin_writes`) too. Both answer 403 `forbidden` in the envelope, with
`details.reason` naming which rule refused (docs/security.md)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from rfqkit.local_guard import HostCheck, refusal_of
from simulator.api.http.policy import same_origin_writes
from simulator.errors import Forbidden

HOST_CHECK: web.AppKey[HostCheck] = web.AppKey("host_check")


@web.middleware
async def guard_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    refused = refusal_of(
        request.app[HOST_CHECK],
        request.method,
        request.headers,
        request.scheme,
        guards_writes=same_origin_writes(request),
    )
    if refused is not None:
        message, details = refused
        raise Forbidden(message, details=details)
    return await handler(request)
