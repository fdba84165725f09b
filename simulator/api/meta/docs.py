"""The machine-readable descriptions: GET /v2/openapi.json and /v1/openapi.json (public),
/feed/openapi.json (the public rates feed, its own document: the feed is not versioned with the
API) and
/_sim/openapi.json."""

from __future__ import annotations

import json

from aiohttp import web

from simulator import __version__
from simulator.api.http.appkeys import OPENAPI_CACHE, ROUTES
from simulator.api.http.openapi import build_openapi
from simulator.api.http.responses import raw_json_response
from simulator.api.http.routes import Document, Operation, RouteTable
from simulator.errors import InternalError


def _serve(document: Document) -> web.Handler:  # type: ignore[name-defined]
    async def handler(request: web.Request) -> web.Response:
        cache = request.app[OPENAPI_CACHE]  # built once: routes do not change at run time
        if document not in cache:
            ops = request.app[ROUTES].for_document(document)
            cache[document] = json.dumps(build_openapi(ops, document, __version__)).encode()
        return raw_json_response(cache[document])

    return handler


DOCUMENTS: tuple[tuple[Document, str], ...] = (
    ("v2", "/v2/openapi.json"),
    ("v1", "/v1/openapi.json"),
    ("feed", "/feed/openapi.json"),
    ("sim", "/_sim/openapi.json"),
)


def add_routes(table: RouteTable) -> None:
    for document, path in DOCUMENTS:
        feed = document == "feed"  # the feed's own rules: CORS, `{error}` bodies
        table.add(
            Operation(
                method="GET",
                path=path,
                handler=_serve(document),
                operation_id=f"{document}OpenApi",
                summary=f"OpenAPI 3.1 description of the {document} surface",
                document=document,
                backstop_exempt=True,  # tooling reading the documents is never throttled
                tags=("meta",),
                responses={200: None},
                errors=(InternalError,),
                envelope=False,
                error_style="feed" if feed else "envelope",
                headers=(("Access-Control-Allow-Origin", "`*`"),) if feed else (),
                placement="here",  # the same at every instance
            )
        )


__all__ = ["Operation", "add_routes"]
