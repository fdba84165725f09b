"""The local guard's middleware (rfqkit/local_guard.py says what it defends against): every
request for a Host name that a web page could have re-pointed at this machine is refused, and a
state-changing request another site's page sent to a route whose policy says so (the control
API, `Operation.same_origin_writes`) too. Both answer 403 `forbidden` in the envelope, with
`details.reason` naming which rule refused (docs/security.md)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from rfqkit.local_guard import CROSS_SITE_MESSAGE, HostCheck, cross_site_reason
from simulator.api.http.policy import same_origin_writes
from simulator.errors import Forbidden

HOST_CHECK: web.AppKey[HostCheck] = web.AppKey("host_check")


@web.middleware
async def guard_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    host = request.headers.get("Host")
    check = request.app[HOST_CHECK]
    if not check.allows(host):
        assert host is not None
        message, details = check.refusal(host)
        raise Forbidden(message, details=details)
    if same_origin_writes(request):
        reason = cross_site_reason(request.method, request.headers, request.scheme, host)
        if reason is not None:
            raise Forbidden(CROSS_SITE_MESSAGE, details={"reason": reason})
    return await handler(request)
