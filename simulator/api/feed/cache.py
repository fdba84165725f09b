"""The feed's response cache (spec 3 "Limits": responses cached for a few seconds): rendered
bodies by operation and normalized query, kept `cache_s` seconds of real time and dropped at
once when the simulator clock is advanced (an advance ages trades out of the 24 h window, and a
cached ticker would hide that). Only successes are stored: a 502 never outlives its cause."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

from aiohttp import web

from simulator.clock import Clock

MAX_ENTRIES = 256  # distinct queries kept; the oldest goes first


@dataclass(frozen=True)
class _Entry:
    body: bytes
    expires: float  # monotonic seconds
    clock_offset: float  # the simulator clock's offset when it was built


class FeedCache:
    def __init__(self, clock: Clock, ttl_s: float, max_entries: int = MAX_ENTRIES) -> None:
        self._clock = clock
        self.ttl_s = ttl_s
        self._max = max_entries
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()  # by (operation, query)
        # Each published trade's JSON, rendered once (trades never change): by (id, tape order).
        self.trade_json: dict[tuple[str, tuple[int, ...]], bytes] = {}

    async def get_or_build(self, key: Hashable, build: Callable[[], Awaitable[bytes]]) -> bytes:
        """The cached body, or `build()`'s (stored only if it returns: an exception, such as
        the 502 of an unreachable chain, leaves the cache as it was). The entry's age counts
        from the start of the build, which may read the chains (the book's offers)."""
        now = self._clock.monotonic()
        offset = self._clock.offset_seconds
        entry = self._entries.get(key)
        if entry is not None and entry.expires > now and entry.clock_offset == offset:
            return entry.body
        body = await build()
        if self.ttl_s > 0:
            self._entries[key] = _Entry(body, now + self.ttl_s, offset)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return body

    def clear(self) -> None:
        self._entries.clear()


FEED_CACHE: web.AppKey[FeedCache] = web.AppKey("feed_cache", FeedCache)  # set by the app factory
