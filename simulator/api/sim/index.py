"""GET /_sim/: the index of the control API, the page the banner links. JSON by default; an HTML
page when the caller prefers text/html (a browser). Both list every control operation from the
route table (so the index cannot miss one), the OpenAPI documents and the docs to read."""

from __future__ import annotations

import html

from aiohttp import web
from pydantic import Field

from simulator import __version__
from simulator.api.http.appkeys import ROUTES
from simulator.api.http.responses import data_response
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.http.schemas import ApiModel
from simulator.api.meta.docs import DOCUMENTS
from simulator.errors import InternalError

# Repository documents a control user reads; paths relative to the repository root.
DOCS: tuple[tuple[str, str], ...] = (
    ("docs/admin-api.md", "every /_sim control with examples"),
    ("docs/quickstart-integrator.md", "a first firm quote: curl, viem, eth-account, webhooks"),
    ("docs/configuration.md", "every setting: YAML key, RFQSIM_* variable, flag"),
    ("docs/webhooks.md", "webhook deliveries, signatures, retries, `rfqsim webhooks listen`"),
    ("docs/maker-protocol.md", "the maker stream, for your own maker bot"),
    ("docs/decisions.md", "what the simulator decided where the spec is silent"),
)


class IndexLink(ApiModel):
    name: str
    href: str = Field(description="A URL of this simulator, or a repository path for docs")
    description: str


class IndexOperation(ApiModel):
    method: str
    path: str
    summary: str


class SimIndex(ApiModel):
    simulator: str = "rfqsim"
    version: str
    openapi: list[IndexLink]
    docs: list[IndexLink]
    controls: list[IndexOperation] = Field(description="Every /_sim operation")


def build_index(table: RouteTable, origin: str) -> SimIndex:
    controls = sorted(
        (
            IndexOperation(method=op.method, path=op.path, summary=op.summary)
            for op in table.for_document("sim")
            if op.path.startswith("/_sim/") and op.path != "/_sim/"
        ),
        key=lambda op: (op.path, op.method),
    )
    return SimIndex(
        version=__version__,
        openapi=[
            IndexLink(name=document, href=f"{origin}{path}", description=f"the {document} API")
            for document, path in DOCUMENTS
        ],
        docs=[IndexLink(name=path, href=path, description=text) for path, text in DOCS],
        controls=controls,
    )


def _prefers_html(request: web.Request) -> bool:
    """A browser's Accept names text/html before any JSON; curl's `*/*` gets JSON."""
    accept = request.headers.get("Accept", "")
    html_at = accept.find("text/html")
    json_at = accept.find("application/json")
    return html_at >= 0 and (json_at < 0 or html_at < json_at)


def render_html(index: SimIndex) -> str:
    def row(op: IndexOperation) -> str:
        path = html.escape(op.path)
        link = f'<a href="{path}">{path}</a>' if op.method == "GET" and "{" not in path else path
        return f"<tr><td>{op.method}</td><td>{link}</td><td>{html.escape(op.summary)}</td></tr>"

    links = "".join(
        f'<li><a href="{html.escape(link.href)}">{html.escape(link.href)}</a>: '
        f"{html.escape(link.description)}</li>"
        for link in index.openapi
    )
    docs = "".join(
        f"<li><code>{html.escape(link.href)}</code>: {html.escape(link.description)}</li>"
        for link in index.docs
    )
    rows = "".join(row(op) for op in index.controls)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>rfqsim {html.escape(index.version)} control API</title></head><body>"
        f"<h1>rfqsim {html.escape(index.version)}: control API</h1>"
        "<p>What the real service does not have: clock, keys, makers, faults, webhooks, ramp "
        "sandbox, outbox. The same index as JSON: <code>curl /_sim/</code>.</p>"
        f"<h2>OpenAPI documents</h2><ul>{links}</ul>"
        f"<h2>Docs (in the repository)</h2><ul>{docs}</ul>"
        "<h2>Controls</h2><table border='1' cellpadding='4'>"
        f"<tr><th>method</th><th>path</th><th>what</th></tr>{rows}</table></body></html>"
    )


CONSOLE_PATH = "/_sim/console"


async def get_index(request: web.Request) -> web.Response:
    """JSON for API clients; a browser is sent to the console (when this simulator serves one)."""
    routes = request.app[ROUTES]
    if _prefers_html(request) and any(op.path == CONSOLE_PATH for op in routes.operations):
        raise web.HTTPFound(CONSOLE_PATH)
    index = build_index(routes, str(request.url.origin()))
    if _prefers_html(request):
        return web.Response(text=render_html(index), content_type="text/html")
    return data_response(index)


async def get_index_page(request: web.Request) -> web.Response:
    """The index as an HTML page, whatever the Accept header (the console links it)."""
    index = build_index(request.app[ROUTES], str(request.url.origin()))
    return web.Response(text=render_html(index), content_type="text/html")


def add_routes(table: RouteTable) -> None:
    table.add(
        Operation(
            method="GET",
            path="/_sim/",
            handler=get_index,
            operation_id="simIndex",
            summary="Index of the control API: every control, the OpenAPI documents, the docs "
            "(JSON; a browser preferring text/html is redirected to the console)",
            document="sim",
            tags=("sim",),
            responses={200: SimIndex},
            errors=(InternalError,),
            placement="here",
        )
    )
    table.add(
        Operation(
            method="GET",
            path="/_sim/index.html",
            handler=get_index_page,
            operation_id="simIndexPage",
            summary="Index of the control API as an HTML page",
            document="sim",
            tags=("sim",),
            responses={200: None},
            errors=(InternalError,),
            documented=False,
            placement="here",
        )
    )
    # The same without the slash, and at the root: the banner's API URL answers when a person
    # opens it (the real service's root is not specified; the simulator's points here).
    for path, op_id in (("/_sim", "simIndexNoSlash"), ("/", "simIndexRoot")):
        table.add(
            Operation(
                method="GET",
                path=path,
                handler=get_index,
                operation_id=op_id,
                summary="Index of the control API",
                document="sim",
                tags=("sim",),
                responses={200: SimIndex},
                errors=(InternalError,),
                documented=False,
                placement="here",
            )
        )
