"""The state gate's middleware: every request runs inside the gate of the state control
(services/sim/gate.py), so a reset or restore waits for it or cancels it, never runs beside it.

A cancelled request is answered 503 `venue_unavailable` (details.reason `state_reset`,
Retry-After 1): a transient error the caller retries into the new state. The operations the
route table declares `gated=False` (the state control's own, the journal's reads, the maker
stream's long-lived sockets) are outside the gate; the simulated fleet's v1 requests (its own
keys, sent as a bearer) pass it while a state change restarts the fleet."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.typedefs import Handler

from simulator.api.http.appkeys import STATE
from simulator.api.http.own_requests import from_the_fleet
from simulator.api.http.policy import gated
from simulator.errors import VenueUnavailable
from simulator.services.sim.gate import StateChangeInterrupted


def interrupted() -> VenueUnavailable:
    return VenueUnavailable(
        "The simulator's state was reset or restored while this request ran; retry it",
        details={"reason": "state_reset"},
        headers={"Retry-After": "1"},
    )


@web.middleware
async def state_gate_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    control = request.app.get(STATE)
    if control is None or not gated(request):
        return await handler(request)
    gate = control.gate
    try:
        await gate.enter(own=gate.admitting_own and from_the_fleet(request))
    except StateChangeInterrupted:
        raise interrupted() from None
    task: asyncio.Task[web.StreamResponse] = asyncio.ensure_future(handler(request))
    gate.track(task)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if gate.untrack(task):
            raise interrupted() from None
        task.cancel()  # the caller went away (or the server stops): the handler goes too
        raise
    finally:
        gate.untrack(task)
