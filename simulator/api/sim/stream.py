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

Changes are collected once for all readers (services/shared/changes.py) and sent together
every `COALESCE_S` by one publisher, which renders each topic once and writes the same bytes to
every reader, so a burst of steps of one RFQ becomes one item and a change costs the same with
one reader or two hundred. While nobody reads, recording costs nothing more than it did.

Readers are capped (settings `stream.max_subscribers`: 429 with Retry-After beyond); a reader
with more than `stream.max_queued_kib` waiting for it is dropped (hung up). The first event
carries an `id:`, so a browser that reconnects says so (Last-Event-ID) and is sent `state`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

from rfqkit.tasks import cancel_and_wait
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
from simulator.api.http.forwarding import FORWARDING
from simulator.api.http.parsing import parse_query
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.http.schemas import ApiModel
from simulator.api.rfq.control import makers_view
from simulator.api.sim.journal import summary_json
from simulator.api.sim.schemas import ClockState
from simulator.api.sim.timelines import item_json
from simulator.api.sim.venue_stream import SPREAD, VenueChanges
from simulator.api.webhooks.schemas import DeliveryView
from simulator.errors import InternalError, InvalidRequest, RateLimited
from simulator.services.shared.changes import ChangeFeed

COALESCE_S = 0.25  # changes are gathered this long before they are sent
MAKERS_EVERY_S = 1.0  # the makers view (it asks the fleet) at most this often
KEEPALIVE_S = 15.0  # a comment line when nothing changed, so proxies keep the stream open
TIMELINE_TOPICS = ("rfqs", "swaps", "limit-orders", "transfers")
TOPICS = (*TIMELINE_TOPICS, "requests", "deliveries", "makers", "clock", "state")
# One topic's event for the ids that changed (None: nothing left to say).
Renderer = Callable[[set[str]], Awaitable[bytes | None]]


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


def _renderers(app: web.Application) -> dict[str, Renderer]:
    names = app[MAKER_NAMES]

    def timeline(topic: str) -> Renderer:
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

    out: dict[str, Renderer] = {topic: timeline(topic) for topic in TIMELINE_TOPICS}
    out.update(requests=requests, deliveries=deliveries, makers=makers, clock=clock, state=state)
    return out


class Publisher:
    """The one task that turns marks into events: every `coalesce_s` with changes, each topic
    is rendered once and the same bytes go to every reader (ChangeFeed.publish). Started by the
    first reader; it waits without cost while nobody reads."""

    def __init__(
        self,
        changes: ChangeFeed,
        renderers: dict[str, Renderer],
        *,
        coalesce_s: float = COALESCE_S,
        makers_every_s: float = MAKERS_EVERY_S,
    ) -> None:
        self.changes = changes
        self.renderers = renderers
        self.coalesce_s = coalesce_s
        self.makers_every_s = makers_every_s
        self.rounds = 0  # publications so far (tests wait on it)
        self.published = asyncio.Event()  # set after each publication
        self._task: asyncio.Task[None] | None = None
        self._makers_sent = float("-inf")
        # Several instances: what the others hold, asked while a reader wants it
        self.venue: VenueChanges | None = None
        self._venue_task: asyncio.Task[None] | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="sim-stream")
        if self.venue is not None and (self._venue_task is None or self._venue_task.done()):
            self._venue_task = loop.create_task(self.venue.run(), name="sim-stream-venue")

    async def stop(self) -> None:
        await cancel_and_wait([t for t in (self._task, self._venue_task) if t is not None])

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self.changes.changed.wait()
            await asyncio.sleep(self.coalesce_s)  # let the rest of a burst arrive
            taken = self.changes.take()
            relayed = self.changes.take_relayed()  # other instances' items (several)
            if "state" in taken:  # everything was replaced: the readers start over
                taken, relayed = {"state": taken["state"]}, {}
            if "makers" in taken:
                if loop.time() < self._makers_sent + self.makers_every_s:
                    del taken["makers"]  # sent recently: keep it for a later round
                    self.changes.mark("makers")
                else:
                    self._makers_sent = loop.time()
            rendered: dict[str, bytes] = {}
            for topic in TOPICS:
                render = self.renderers.get(topic)
                chunk = None
                if topic in taken and render is not None:
                    chunk = await render(taken[topic])
                if topic in relayed:
                    items = sorted(relayed[topic], key=lambda i: i["created_at"], reverse=True)
                    chunk = (chunk or b"") + _event(topic, {"items": items})
                if chunk is not None:
                    rendered[topic] = chunk
            if rendered:
                self.changes.publish(rendered)
            self.rounds += 1
            self.published.set()
            self.published.clear()


# The live stream's one renderer and writer (GET /_sim/stream), started by its first reader.
STREAM_PUBLISHER: web.AppKey[Publisher] = web.AppKey("stream_publisher")


def build_publisher(app: web.Application) -> Publisher:
    """The app's publisher with the real renderers (the app factory keeps it); of several
    instances, with what the others hold (api/sim/venue_stream.py)."""
    publisher = Publisher(app[CHANGES], _renderers(app))
    publisher.venue = VenueChanges(lambda: app.get(FORWARDING), app[CHANGES], COALESCE_S)
    return publisher


def _hello(topics: frozenset[str], reconnected: bool) -> bytes:
    """`id:` makes a browser's EventSource send Last-Event-ID when it reconnects; a reconnected
    reader missed what changed meanwhile (it may have been dropped for reading too slowly), so
    it is told to read everything again (`state`)."""
    hello = b"id: 1\n" + _event("hello", {"topics": sorted(topics)})
    return hello + _event("state", {}) if reconnected and "state" in topics else hello


async def stream(request: web.Request) -> web.StreamResponse:
    topics = _topics(parse_query(request, StreamQuery))
    app = request.app
    changes = app[CHANGES]
    subscription = changes.subscribe(topics)  # over the cap: 429, before anything is sent
    if request.transport is not None:
        subscription.hang_up = request.transport.abort
    subscription.alive = lambda: (
        request.transport is not None and not request.transport.is_closing()
    )
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"}
    )
    try:
        publisher = app[STREAM_PUBLISHER]
        publisher.start()
        if publisher.venue is not None and not topics.isdisjoint(SPREAD):
            await publisher.venue.ask()  # several instances: the others watch from now
        await response.prepare(request)
        await response.write(_hello(topics, "Last-Event-ID" in request.headers))
        while not subscription.closed:
            try:
                async with asyncio.timeout(KEEPALIVE_S):
                    await subscription.wake.wait()
            except TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            for chunk in subscription.take():
                await response.write(chunk)
    except (ConnectionResetError, ConnectionError):
        pass  # the reader went away, or was dropped (hung up)
    finally:
        changes.unsubscribe(subscription)
        if not subscription.dropped:
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
            errors=(InvalidRequest, RateLimited, InternalError),
            journaled=False,  # the console's live stream: reading adds no rows
            # where the venue's journal and lists are (several instances: passed on as it
            # comes, api/http/forwarding.py)
            placement="primary",
        )
    )
