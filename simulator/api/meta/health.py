"""GET /v2/health and GET /v1/health: 200 while the process is up, with the state of each
dependency."""

from __future__ import annotations

from aiohttp import web

from rfqkit.timestamps import isoformat
from simulator import __version__
from simulator.api.http.appkeys import CLOCK, HEALTH
from simulator.api.http.responses import data_response
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.http.schemas import DependencyCheck, Health
from simulator.errors import InternalError, MethodNotAllowed, NotFound


async def health(request: web.Request) -> web.Response:
    """200 while the process serves; the body says which dependency is down, if any."""
    now = isoformat(request.app[CLOCK].now())
    dependencies = request.app[HEALTH]
    checks = {
        name: DependencyCheck.model_validate(state)
        for name, state in dependencies.snapshot().items()
    }
    return data_response(
        Health(status=dependencies.overall, version=__version__, time=now, checks=checks)
    )


def add_routes(table: RouteTable) -> None:
    for document, prefix in (("v2", "/v2"), ("v1", "/v1")):
        table.add(
            Operation(
                method="GET",
                path=f"{prefix}/health",
                handler=health,
                operation_id=f"{document}Health",
                summary="Liveness (200 while the process is up) and the state of each dependency",
                document=document,  # type: ignore[arg-type]
                backstop_exempt=True,  # a load balancer's probes are never throttled
                tags=("health",),
                responses={200: Health},
                errors=(NotFound, MethodNotAllowed, InternalError),
                placement="here",  # each instance answers for itself (a balancer's probe)
            )
        )
