"""GET /v2/health and GET /v1/health: the process is up."""

from __future__ import annotations

from aiohttp import web

from simulator import __version__
from simulator.api.http.appkeys import CLOCK
from simulator.api.http.responses import data_response
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.http.schemas import Health
from simulator.clock import isoformat
from simulator.errors import InternalError, MethodNotAllowed, NotFound


async def health(request: web.Request) -> web.Response:
    now = isoformat(request.app[CLOCK].now())
    return data_response(Health(status="ok", version=__version__, time=now))


def add_routes(table: RouteTable) -> None:
    for document, prefix in (("v2", "/v2"), ("v1", "/v1")):
        table.add(
            Operation(
                method="GET",
                path=f"{prefix}/health",
                handler=health,
                operation_id=f"{document}Health",
                summary="Liveness: 200 while the process is up",
                document=document,  # type: ignore[arg-type]
                backstop_exempt=True,  # docs/decisions.md C10
                tags=("health",),
                responses={200: Health},
                errors=(NotFound, MethodNotAllowed, InternalError),
            )
        )
