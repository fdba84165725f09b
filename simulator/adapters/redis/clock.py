"""The venue's clock offset on the shared engine: `/_sim/clock/advance` at one instance moves
every instance's clock. The instance that advances moves the chains (its clock's listeners)
and adds its seconds to the shared offset; every instance takes the sum as it is published,
and one that joins later starts from it. Two advances at once, at two instances, add up: the
chains moved by both, and every clock ends at the sum.

Keys, under the engine's prefix: `clock` (the offset in seconds; its channel of the same name
carries each new value)."""

from __future__ import annotations

import contextlib

from simulator.adapters.redis.engine import SharedEngine, follow_forever
from simulator.clock import Clock


class SharedClockOffset:
    def __init__(self, engine: SharedEngine, clock: Clock) -> None:
        self._engine = engine
        self._clock = clock
        self._key = engine.prefix + "clock"

    def join(self) -> None:
        """Start from the venue's offset (blocking: once, before the app serves)."""
        offset = self._engine.control.get(self._key)
        if offset is not None:
            self._clock.catch_up(float(offset))

    async def advanced(self, seconds: float) -> None:
        """A clock listener: this instance advanced by `seconds`; the venue's offset grows by
        them and every instance hears the sum."""
        offset = await self._engine.client.incrbyfloat(self._key, seconds)
        await self._engine.client.publish(self._key, repr(float(offset)))
        self._clock.catch_up(float(offset))

    async def follow(self) -> None:
        """Take every offset another instance publishes, until cancelled; while the engine is
        unreachable, try again every second (and catch up on what was missed)."""
        await follow_forever(self._follow_once, "the venue's clock")

    async def _follow_once(self) -> None:
        pubsub = self._engine.client.pubsub()
        try:
            await pubsub.subscribe(self._key)
            # An engine that came back empty starts from this clock; then what was published
            # before the subscription took hold.
            await self._engine.client.set(self._key, repr(self._clock.offset_seconds), nx=True)
            self.join()
            async for message in pubsub.listen():
                if message.get("type") == "message":
                    self._clock.catch_up(float(message["data"]))
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()  # type: ignore[no-untyped-call]
