"""`Server-Timing` (W3C Server Timing) on every response the middleware saw:

    Server-Timing: sim;dur=4.312, makers;dur=1.207, maker;dur=1.1;desc="alpha", ...

`sim` is the time in milliseconds from the outermost middleware taking the request until the
response's headers are prepared; `makers` (firm requests only) the part of it the auction spent
waiting for makers' answers, and one `maker` entry per maker asked its own part of that wait
(from the auction's first round's start until its answer, named by `desc`). `sim - makers` is
what the simulator itself added: the load harness reports it per request and warns when it is
large, and names the maker whose wait it mostly was (docs/decisions.md, "Server-Timing").
Clients that do not know the header ignore it, as HTTP requires of unknown headers."""

from __future__ import annotations

import time
from collections.abc import Mapping

from aiohttp import web

from rfqkit.server_timing import maker_wait_entry
from simulator.api.http.appkeys import MAKER_NAMES, MAKER_WAIT_S, MAKER_WAITS, REQUEST_STARTED


def mark_started(request: web.Request) -> None:
    request[REQUEST_STARTED] = time.perf_counter()


def record_maker_wait(
    request: web.Request, seconds: float, by_maker: Mapping[str, float] | None = None
) -> None:
    """The auction's wait for makers, and each maker's part of it by wallet (named as the
    fleet names it, else by wallet, in the header)."""
    request[MAKER_WAIT_S] = seconds
    if by_maker:
        names = request.app[MAKER_NAMES]
        request[MAKER_WAITS] = [
            maker_wait_entry(names.name_of(wallet) or wallet, waited * 1000)
            for wallet, waited in by_maker.items()
        ]


async def add_server_timing(request: web.Request, response: web.StreamResponse) -> None:
    started = request.get(REQUEST_STARTED)
    if started is None:
        return  # answered before the middleware ran (aiohttp's own parser errors)
    metrics = [f"sim;dur={(time.perf_counter() - started) * 1000:.3f}"]
    maker_wait = request.get(MAKER_WAIT_S)
    if maker_wait is not None:
        metrics.append(f"makers;dur={maker_wait * 1000:.3f}")
        metrics += request.get(MAKER_WAITS, ())
    response.headers["Server-Timing"] = ", ".join(metrics)
