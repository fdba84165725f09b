"""The request journal's middleware: records every finished request into the journal service
(services/sim/journal.py). Outermost, so it sees the final status and body of every answer,
errors included, and its own cost is measured as a whole (docs/performance.md).

Only references are kept here (the bytes the handler read, the response's body); decoding and
redaction happen when the journal is read. Credential headers are not kept; the key's public
prefix is."""

from __future__ import annotations

import re
import time

from aiohttp import web
from aiohttp.typedefs import Handler

from simulator.api.http.appkeys import JOURNAL
from simulator.api.http.forwarding import journaled_elsewhere
from simulator.api.http.middleware import request_id_of
from simulator.api.http.own_requests import from_the_fleet
from simulator.api.http.policy import journaled
from simulator.services.sim.journal import BODY_MAX_BYTES

# `<env>_<live|test>_<public prefix>.<secret>`: the part before the dot is public.
_KEY_PREFIX = re.compile(r"\b([a-z]{2,8}_(?:live|test)_[0-9A-Za-z]{4,64})\.")
# The console marks its own reads with this header: a page open in a browser would otherwise
# fill the journal with the reads it makes to draw itself (its actions, POSTs, are recorded).
CONSOLE_READ_HEADER = "X-Rfqsim-Console"


def key_prefix(request: web.Request) -> str | None:
    header = request.headers.get("Authorization") or request.headers.get("X-API-Key")
    if not header:
        return None
    match = _KEY_PREFIX.search(header)
    return match.group(1) if match else None


async def _request_body(request: web.Request) -> tuple[bytes | None, int]:
    size = request.content_length or 0
    if not request.body_exists or size == 0:
        return None, 0
    if size > BODY_MAX_BYTES:
        return None, size
    try:
        body = await request.read()  # what the handler read (cached), or the unread rest
    except Exception:  # the body broke mid-way: the status says so already
        return None, size
    return body, len(body)


@web.middleware
async def journal_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    journal = request.app.get(JOURNAL)
    if (
        journal is None
        or not journaled(request)  # the route table says (Operation.journaled)
        or (request.method == "GET" and CONSOLE_READ_HEADER in request.headers)
        or from_the_fleet(request)
    ):
        return await handler(request)
    at = journal.now()
    started = time.perf_counter()
    response = await handler(request)
    latency_ms = (time.perf_counter() - started) * 1000
    if journaled_elsewhere(request):
        return response  # several instances: the one that served it journals it
    request_body, request_size = await _request_body(request)
    body = response.body if isinstance(response, web.Response) else None
    response_body = body if isinstance(body, bytes) and len(body) <= BODY_MAX_BYTES else None
    journal.record(
        request_id=request_id_of(request),
        at=at,
        method=request.method,
        path=request.path,
        query=request.query_string,
        status=response.status,
        latency_ms=round(latency_ms, 3),
        key_prefix=key_prefix(request),
        request_type=request.content_type if request_size else None,
        request_body=request_body,
        request_size=request_size,
        response_body=response_body,
        response_size=len(body) if isinstance(body, bytes) else 0,
        request_headers=request.headers,
        response_headers=response.headers,
    )
    return response
