"""Operations that change the venue's configuration (`changes_configuration`: keys, limits, a
reset or restore) send the change to the other instances once they answered, before the
response leaves, so a request at another instance right after finds it (a key it does not know
is also read from the store before a 401: api/access/middleware.py). One instance: nothing."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from simulator.api.http.appkeys import CONFIGURATION
from simulator.api.http.policy import operation_of


@web.middleware
async def configuration_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    replica = request.app[CONFIGURATION]
    if replica is None or response.status >= 400:
        return response  # one instance (nothing to share), or nothing changed
    operation = operation_of(request)
    if operation is not None and operation.changes_configuration:
        await replica.publish()
    return response
