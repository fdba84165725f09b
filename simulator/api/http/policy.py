"""Per-route policy at request time: what the route table (api/http/routes.py `Operation`)
declares for the operation a request reached. A request aiohttp answers itself takes the policy
of what is declared at its path (405: a known path, another method) or, for a path nobody
declares (404), the defaults of the document its first path segment belongs to."""

from __future__ import annotations

from aiohttp import web

from simulator.api.http.appkeys import OPERATIONS, ROUTES
from simulator.api.http.routes import Operation


def operation_of(request: web.Request) -> Operation | None:
    """The operation the request's route was registered for (None: aiohttp's own 404 or 405)."""
    route_name = request.match_info.route.name
    operations = request.app.get(OPERATIONS)
    return operations.get(route_name) if operations is not None and route_name else None


def _declared(request: web.Request) -> Operation | None:
    operation = operation_of(request)
    if operation is None and ROUTES in request.app:
        operation = request.app[ROUTES].declared_at(request.path)
    return operation


def journaled(request: web.Request) -> bool:
    operation = _declared(request)
    return operation.journaled if operation is not None else True


def gated(request: web.Request) -> bool:
    operation = _declared(request)
    return operation.gated if operation is not None else True


def api_traffic(request: web.Request) -> bool:
    """Behind the per-IP backstop and the fault switch unless the request is for the control
    API (an operation of the "sim" document, or a path under one of theirs)."""
    operation = _declared(request)
    if operation is not None:
        return operation.api_traffic
    document = request.app[ROUTES].document_at(request.path) if ROUTES in request.app else None
    return document != "sim"


def same_origin_writes(request: web.Request) -> bool:
    """A control route's writes come from this server's own pages or from non-browser clients
    only; a path nobody declares takes its first segment's rule (`/_sim/...`: yes)."""
    operation = _declared(request)
    if operation is not None:
        return operation.same_origin_writes
    return request.path == "/_sim" or request.path.startswith("/_sim/")
