"""GET /_sim/stream: server-sent events of what changed, for the console (or any reader): the
same JSON the /_sim API returns, pushed within a second of the change.

Events (`event:` name, then `data:` one JSON object):
- `rfqs`, `swaps`, `limit-orders`, `transfers`: `{items: [...]}` as GET /_sim/<kind> lists them
  (the changed objects only);
- `requests`: `{requests: [...]}` as GET /_sim/requests?summary=true (the new entries; bodies
  and headers are read when a row is opened);
- `deliveries`: `{deliveries: [...]}` as GET /_sim/webhooks/deliveries (the changed ones);
- `makers`: GET /_sim/makers whole (at most once a second);
- `clock`: GET /_sim/clock; `state`: `{}` after a reset or restore (read everything again);
- `hello`: `{topics}` once, when the stream opens.

Changes are collected per reader (services/shared/changes.py) and sent together every
`COALESCE_S`, so a burst of steps of one RFQ becomes one item. While nobody reads, recording
costs nothing more than it did."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

from rfqkit.timestamps import isoformat
from simulator.api.http.appkeys import (
    CHANGES,
    CLOCK,
    JOURNAL,
    MAKER_NAMES,
    RFQ,
    TIMELINES,
    WEBHOOKS,
)
from simulator.api.http.parsing import parse_query
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.http.schemas import ApiModel
from simulator.api.rfq.control import makers_view
from simulator.api.sim.journal import summary_json
from simulator.api.sim.schemas import ClockState
from simulator.api.sim.timelines import item_json
from simulator.api.webhooks.schemas import DeliveryView
from simulator.errors import InternalError, InvalidRequest

COALESCE_S = 0.25  # changes are gathered this long before they are sent
MAKERS_EVERY_S = 1.0  # the makers view (it asks the fleet) at most this often
KEEPALIVE_S = 15.0  # a comment line when nothing changed, so proxies keep the stream open
TIMELINE_TOPICS = ("rfqs", "swaps", "limit-orders", "transfers")
TOPICS = (*TIMELINE_TOPICS, "requests", "deliveries", "makers", "clock", "state")


class StreamQuery(ApiModel):
    topics: str | None = Field(
        default=None,
        max_length=200,
        description=f"Comma-separated, of: {', '.join(TOPICS)} (default: all)",
    )


def _event(name: str, payload: Any) -> bytes:
    data = (
        payload.model_dump_json(by_alias=True)
        if isinstance(payload, BaseModel)
        else (json.dumps(payload, separators=(",", ":")))
    )
    return f"event: {name}\ndata: {data}\n\n".encode()


def _topics(query: StreamQuery) -> frozenset[str]:
    if query.topics is None:
        return frozenset(TOPICS)
    wanted = frozenset(t.strip() for t in query.topics.split(",") if t.strip())
    unknown = sorted(wanted - set(TOPICS))
    if unknown or not wanted:
        raise InvalidRequest.for_field("topics", f"unknown topics {unknown}; known: {TOPICS}")
    return wanted


def _renderers(app: web.Application) -> dict[str, Callable[[set[str]], Awaitable[bytes | None]]]:
    names = app[MAKER_NAMES]

    def timeline(topic: str) -> Callable[[set[str]], Awaitable[bytes | None]]:
        async def render(ids: set[str]) -> bytes | None:
            timelines = app[TIMELINES][topic]
            found = [t for i in ids if (t := timelines.get(i)) is not None]
            found.sort(key=lambda t: t.created_at, reverse=True)
            items = [item_json(t, names) for t in found]
            return _event(topic, {"items": items}) if items else None

        return render

    async def requests(ids: set[str]) -> bytes | None:
        journal = app.get(JOURNAL)
        if journal is None:
            return None
        entries = journal.by_seq(int(i) for i in ids)
        views = [summary_json(e) for e in entries]
        return _event("requests", {"requests": views}) if views else None

    async def deliveries(ids: set[str]) -> bytes | None:
        outbox = app[WEBHOOKS].outbox
        found = [d for i in ids if (d := outbox.get(i)) is not None]
        views = [DeliveryView.model_validate(d).model_dump(by_alias=True) for d in found]
        return _event("deliveries", {"deliveries": views}) if views else None

    async def makers(ids: set[str]) -> bytes | None:
        status = await app[RFQ].maker_control.status()
        return _event("makers", makers_view(app, status))

    async def clock(ids: set[str]) -> bytes | None:
        now = app[CLOCK]
        return _event(
            "clock", ClockState(now=isoformat(now.now()), offset_seconds=now.offset_seconds)
        )

    async def state(ids: set[str]) -> bytes | None:
        return _event("state", {})

    out: dict[str, Callable[[set[str]], Awaitable[bytes | None]]] = {
        topic: timeline(topic) for topic in TIMELINE_TOPICS
    }
    out.update(requests=requests, deliveries=deliveries, makers=makers, clock=clock, state=state)
    return out


async def stream(request: web.Request) -> web.StreamResponse:
    topics = _topics(parse_query(request, StreamQuery))
    app = request.app
    renderers = _renderers(app)
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"}
    )
    await response.prepare(request)
    changes = app[CHANGES]
    subscription = changes.subscribe(topics)
    loop = asyncio.get_running_loop()
    makers_sent = 0.0
    try:
        await response.write(_event("hello", {"topics": sorted(topics)}))
        while True:
            try:
                await asyncio.wait_for(subscription.wake.wait(), KEEPALIVE_S)
            except TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            if subscription.closed:
                break
            await asyncio.sleep(COALESCE_S)  # let the rest of a burst arrive
            taken = subscription.take()
            if "state" in taken:  # everything was replaced: the reader starts over
                taken = {"state": taken["state"]}
            if "makers" in taken:
                wait = makers_sent + MAKERS_EVERY_S - loop.time()
                if wait > 0:  # sent recently: keep it for a later round
                    del taken["makers"]
                    subscription.add("makers", "")
                else:
                    makers_sent = loop.time()
            for topic in TOPICS:
                if topic in taken:
                    chunk = await renderers[topic](taken[topic])
                    if chunk is not None:
                        await response.write(chunk)
    except (ConnectionResetError, ConnectionError):
        pass  # the reader went away
    finally:
        changes.unsubscribe(subscription)
        with contextlib.suppress(Exception):
            await response.write_eof()
    return response


def add_routes(table: RouteTable) -> None:
    table.add(
        Operation(
            method="GET",
            path="/_sim/stream",
            handler=stream,
            operation_id="simStream",
            summary="Server-sent events of what changes (rfqs, swaps, limit-orders, transfers, "
            "requests, deliveries, makers, clock, state), as the /_sim reads render them",
            document="sim",
            tags=("sim-console",),
            query=StreamQuery,
            responses={200: None},
            errors=(InvalidRequest, InternalError),
            journaled=False,  # the console's live stream: reading adds no rows
        )
    )
