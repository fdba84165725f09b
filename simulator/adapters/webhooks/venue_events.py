"""Several instances: the venue's webhook worker is its first instance's (docs/decisions.md
SC16), so each event is delivered once, and every delivery is listed in one place. An event
made at another instance (an RFQ it holds was filled, expired, ...) is sent to the first, in
order, and dispatched there as if made there (`POST /_venue/events`, which only the
venue's instances may call); at the first instance it is dispatched at once. An event sent
while no first instance answers is logged and dropped: the spec's deliveries are at least once
from the venue's outbox, and this one never reached it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict

import aiohttp

from simulator.services.shared.events import Event, EventSink
from simulator.services.sim.instances import InstanceEntry

log = logging.getLogger("rfqsim.webhooks")


class EventsToFirstInstance:
    def __init__(
        self,
        local: EventSink,
        here: int,
        first: Callable[[], Awaitable[InstanceEntry | None]],
        headers: Callable[[], Mapping[str, str]],
        path: str,
    ) -> None:
        self._local = local  # this instance's dispatcher
        self._here = here
        self._first = first  # the venue's first instance alive
        self._headers = headers  # the venue's hop secret
        self._path = path  # where the first instance takes them
        self._queue: list[Event] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    def publish(self, event: Event) -> None:
        """Called inside the state change that made the event: queued, never raising."""
        self._queue.append(event)
        self._wake.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="venue-events")

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._queue = self._queue, []
            if batch:
                await self._deliver(batch)

    async def _deliver(self, batch: list[Event]) -> None:
        try:
            first = await self._first()
        except Exception:  # the engine away: nobody to ask which instance is first
            first = None
        if first is None or first.id == self._here:
            for event in batch:
                self._local.publish(event)
            return
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        try:
            async with self._session.post(
                first.api_url + self._path,
                json=[asdict(event) for event in batch],
                headers=dict(self._headers()),
            ) as answer:
                if answer.status >= 300:
                    raise aiohttp.ClientResponseError(answer.request_info, (), status=answer.status)
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning(
                "%d events not handed to instance %d, the venue's webhook worker: %s",
                len(batch),
                first.id,
                exc,
            )

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
