"""Operations that change the venue's configuration (`changes_configuration`: keys, limits, a
reset or restore) send the change to the other instances once they answered, before the
response leaves: the change is written to the engine, and every other instance alive is asked
to read it (`POST /_venue/configuration`) and has answered, so a request at any instance right
after sees it (a key suspended at one is refused at the next request at another). The
engine's channel also carries the change (an instance the ask did not reach reads it there),
and a key an instance does not know is read from the engine before a 401
(api/access/middleware.py). One instance: nothing."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from simulator.api.http.appkeys import CONFIGURATION
from simulator.api.http.forwarding import FORWARDING, sent_on
from simulator.api.http.policy import operation_of
from simulator.api.http.routes import RouteTable
from simulator.errors import InternalError, NotFound

# Not under /_sim, which --no-control-api takes away: a venue without the control API still
# shares the keys and webhook endpoints its API changes.
REFRESH_PATH = "/_venue/configuration"


@web.middleware
async def configuration_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    replica = request.app[CONFIGURATION]
    if replica is None or response.status >= 400:
        return response  # one instance (nothing to share), or nothing changed
    operation = operation_of(request)
    if operation is not None and operation.changes_configuration:
        await replica.publish()
        forwarding = request.app[FORWARDING]
        if forwarding is not None:
            await forwarding.tell_others(REFRESH_PATH)
    return response


async def refresh_configuration(request: web.Request) -> web.Response:
    """Another instance of the venue changed its configuration: read it now (nobody else
    may ask)."""
    replica = request.app[CONFIGURATION]
    if replica is None or not sent_on(request):
        raise NotFound("No such resource")
    await replica.refresh()
    return web.Response(status=204)


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim",))
    add(
        "POST",
        REFRESH_PATH,
        refresh_configuration,
        "simVenueConfiguration",
        "Another instance of the venue changed its configuration: read it now",
        responses={204: None},
        errors=(NotFound, InternalError),
        documented=False,
        journaled=False,
        placement="here",
        gated=False,  # asked while the instance that asks may hold this one's gate (a reset)
    )
