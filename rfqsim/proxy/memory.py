"""Bounded memory for what the proxy remembers across exchanges: :class:`ExpiringMap` forgets an
entry when its lifetime (the spec's own: a quote's deadline plus the 24 h correction window, a
limiter window, ...) has passed, and the least recently touched entries once it holds
``capacity``, so a long run at a steady rate stays at a steady size.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ExpiringMap(Generic[K, V]):
    """A dict whose entries lapse at their expiry (monotonic seconds) and whose size is capped
    (the least recently set entry goes first). Lapsed entries are swept on every write, in
    O(log n) per entry, so no sweep ever walks the whole map."""

    def __init__(self, capacity: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = capacity
        self._clock = clock
        self._entries: OrderedDict[K, tuple[float, int, V]] = OrderedDict()
        self._expiries: list[tuple[float, int, K]] = []  # (expires, generation, key)
        self._generations = itertools.count()
        self.evicted = 0  # entries dropped for room before their expiry

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            return None
        return entry[2]

    def set(self, key: K, value: V, lifetime_s: float) -> None:
        """Remember ``value`` for ``lifetime_s`` from now (a later set replaces the lifetime)."""
        now = self._clock()
        generation = next(self._generations)
        self._entries[key] = (now + lifetime_s, generation, value)
        self._entries.move_to_end(key)
        heapq.heappush(self._expiries, (now + lifetime_s, generation, key))
        self._sweep(now)

    def pop(self, key: K) -> V | None:
        entry = self._entries.pop(key, None)
        return entry[2] if entry is not None else None

    def _sweep(self, now: float) -> None:
        heap = self._expiries
        while heap and heap[0][0] <= now:
            _, generation, key = heapq.heappop(heap)
            entry = self._entries.get(key)
            if entry is not None and entry[1] == generation:
                del self._entries[key]
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
            self.evicted += 1
        if len(heap) > 2 * len(self._entries) + 1024:
            # Replaced lifetimes leave dead heap entries: rebuild from the live ones.
            self._expiries = [(e, g, k) for k, (e, g, _) in self._entries.items()]
            heapq.heapify(self._expiries)
