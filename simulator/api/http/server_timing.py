"""`Server-Timing` (W3C Server Timing) on every response the middleware saw:

    Server-Timing: sim;dur=4.312, makers;dur=1.207

`sim` is the time in milliseconds from the outermost middleware taking the request until the
response's headers are prepared; `makers` (firm requests only) the part of it the auction spent
waiting for makers' answers. `sim - makers` is what the simulator itself added: the load
harness reports it per request and warns when it is large (docs/decisions.md, "Server-Timing").
Clients that do not know the header ignore it, as HTTP requires of unknown headers."""

from __future__ import annotations

import time

from aiohttp import web

from simulator.api.http.appkeys import MAKER_WAIT_S, REQUEST_STARTED


def mark_started(request: web.Request) -> None:
    request[REQUEST_STARTED] = time.perf_counter()


def record_maker_wait(request: web.Request, seconds: float) -> None:
    request[MAKER_WAIT_S] = seconds


async def add_server_timing(request: web.Request, response: web.StreamResponse) -> None:
    started = request.get(REQUEST_STARTED)
    if started is None:
        return  # answered before the middleware ran (aiohttp's own parser errors)
    metrics = [f"sim;dur={(time.perf_counter() - started) * 1000:.3f}"]
    maker_wait = request.get(MAKER_WAIT_S)
    if maker_wait is not None:
        metrics.append(f"makers;dur={maker_wait * 1000:.3f}")
    response.headers["Server-Timing"] = ", ".join(metrics)
