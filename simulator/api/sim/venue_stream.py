"""Several instances: the console's live stream is read at the venue's first instance, but an
RFQ changes where its record is (api/http/forwarding.py). While the first has a reader of the
RFQs, it asks every other instance, every quarter second, what changed there since it last
asked (`POST /_venue/changes`, which only the venue's instances may call); each answers with
the items of its RFQs that changed, rendered as GET /_sim/rfqs lists them, and the first hands
them to its readers as `rfqs` events (services/shared/changes.py `watched`, `relayed`).

An instance that starts watching (asked for the first time, or again after its watch stopped:
nobody asked through `WATCH_MAX_IDS` changes) answers `started` with no items: what changed
before is not known, so a first instance that had asked it before tells its readers to read
everything again (`state`). A new reader of the RFQs is sent its `hello` once every other
instance has been asked (and so watches): whatever changes after the hello reaches it.

Cost: nothing while nobody reads the stream; with a reader, one loopback request per other
instance every quarter second, and the items the others render."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web

from simulator.api.http.appkeys import CHANGES, MAKER_NAMES, TIMELINES
from simulator.api.http.forwarding import FORWARDING, Forwarding, sent_on
from simulator.api.http.routes import RouteTable
from simulator.api.sim.timelines import KINDS, item_json
from simulator.errors import InternalError, NotFound, VenueUnavailable
from simulator.services.shared.changes import ChangeFeed

CHANGES_PATH = "/_venue/changes"
SPREAD = tuple(kind.topic for kind in KINDS if kind.spread)  # held where each record is


async def take_changes(request: web.Request) -> web.Response:
    """What changed here of the spread topics since the first instance last asked."""
    app = request.app
    if app.get(FORWARDING) is None or not sent_on(request):
        raise NotFound("No such resource")
    watched = app[CHANGES].watched(SPREAD)
    if watched is None:
        return web.json_response({"started": True, "items": {}})
    names = app[MAKER_NAMES]
    items: dict[str, list[dict[str, Any]]] = {}
    for topic, ids in watched.items():
        timelines = app[TIMELINES][topic]
        found = [item_json(t, names) for i in ids if (t := timelines.get(i)) is not None]
        if found:
            items[topic] = found
    return web.json_response({"started": False, "items": items})


class VenueChanges:
    """At the instance that publishes the stream: while a reader wants a spread topic, every
    `every_s` asks the venue's other instances what changed there, and relays it."""

    def __init__(
        self,
        forwarding: Callable[[], Forwarding | None],
        changes: ChangeFeed,
        every_s: float,
    ) -> None:
        self._forwarding = forwarding  # None: one instance, nothing to ask
        self._changes = changes
        self._every_s = every_s
        self._asked: set[int] = set()  # instances asked since the readers came

    async def run(self) -> None:
        while self._forwarding() is not None:  # one instance: nothing to ask, ever
            await asyncio.sleep(self._every_s)
            if not self._changes.reading(SPREAD):
                self._asked.clear()  # a reader that comes is sent what changes from then
                continue
            try:
                if not await self.ask():
                    return
            except VenueUnavailable:
                pass  # the engine is away (the venue's list cannot be read): ask next round

    async def ask(self) -> bool:
        """One round: every other instance alive says what changed there since it was last
        asked (and watches from now). False with one instance: nothing to ask, ever."""
        forwarding = self._forwarding()
        if forwarding is None:
            return False
        for entry, answer in await forwarding.ask_others(CHANGES_PATH):
            if answer.get("started"):
                if entry.id in self._asked:  # its watch had stopped: changes were missed
                    self._changes.mark("state")
                self._asked.add(entry.id)
                continue
            for topic, items in answer.get("items", {}).items():
                self._changes.relayed(topic, items)
        return True


def add_routes(table: RouteTable) -> None:
    # Not a client's request: not journaled; a read of what a reset replaces: waits for it.
    add = table.adder("sim", ("sim-console",), journaled=False)
    add(
        "POST",
        CHANGES_PATH,
        take_changes,
        "simVenueChanges",
        "What changed of the RFQs held here, for the first instance's live stream",
        responses={200: None},
        errors=(NotFound, InternalError),
        documented=False,
        placement="here",
    )
