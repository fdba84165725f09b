"""Several instances: the venue's webhook worker is its first instance's (docs/decisions.md
SC16), so each event is delivered once, and every delivery is listed in one place. An event
made at another instance (an RFQ it holds was filled, expired, ...) is sent to the first, in
order, and dispatched there as if made there (`POST /_venue/events`, which only the
venue's instances may call); at the first instance it is dispatched at once. An event sent
while no first instance answers is logged and dropped: the spec's deliveries are at least once
from the venue's outbox, and this one never reached it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict

from simulator.adapters.sim.to_first_instance import ToFirstInstance
from simulator.services.shared.events import Event, EventSink
from simulator.services.sim.instances import InstanceEntry


class EventsToFirstInstance:
    def __init__(
        self,
        local: EventSink,
        here: int,
        first: Callable[[], Awaitable[InstanceEntry | None]],
        headers: Callable[[], Mapping[str, str]],
        path: str,
    ) -> None:
        self._batches = ToFirstInstance(local.publish, asdict, here, first, headers, path, "events")

    def publish(self, event: Event) -> None:
        """Called inside the state change that made the event: queued, never raising."""
        self._batches.put(event)

    async def aclose(self) -> None:
        await self._batches.aclose()
