"""The console: GET /_sim/console, a page served from simulator/console/ (plain HTML, CSS and ES
modules; no build step, nothing fetched from elsewhere) that reads the /_sim API and its live
stream. Only what the directory holds under an allowed name and type is served.

Every answer carries a Content-Security-Policy that allows scripts, styles and connections from
this origin only and no inline script: the page writes data with textContent, and even markup
that slipped into the document could not run."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from simulator.api.http.routes import Operation, RouteTable
from simulator.errors import InternalError, NotFound

CONSOLE_DIR = Path(__file__).resolve().parents[2] / "console"
CONTENT_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
ASSET_PATTERN = r"[a-z][a-z0-9_-]{0,40}\.(?:js|css)"


def _file(name: str) -> web.Response:
    path = CONSOLE_DIR / name
    content_type = CONTENT_TYPES.get(path.suffix)
    if content_type is None or path.parent != CONSOLE_DIR or not path.is_file():
        raise NotFound(f"No console file {name}")
    return web.Response(
        body=path.read_bytes(), content_type=content_type, charset="utf-8", headers=HEADERS
    )


async def console_page(request: web.Request) -> web.Response:
    return _file("index.html")


async def console_asset(request: web.Request) -> web.Response:
    return _file(request.match_info["asset"])


def add_routes(table: RouteTable) -> None:
    table.add(
        Operation(
            method="GET",
            path="/_sim/console",
            handler=console_page,
            operation_id="simConsole",
            summary="The console: the venue live in a browser (HTML)",
            document="sim",
            tags=("sim-console",),
            responses={200: None},
            journaled=False,  # drawing the console adds no rows to the journal
            errors=(InternalError,),
            placement="here",
        )
    )
    table.add(
        Operation(
            method="GET",
            path="/_sim/console/{asset}",
            route_path=f"/_sim/console/{{asset:{ASSET_PATTERN}}}",
            handler=console_asset,
            operation_id="simConsoleAsset",
            summary="The console's scripts and styles",
            document="sim",
            tags=("sim-console",),
            responses={200: None},
            journaled=False,  # drawing the console adds no rows to the journal
            errors=(NotFound, InternalError),
            documented=False,
            placement="here",
        )
    )
