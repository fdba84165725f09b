"""The change feed: which objects changed, per topic (rfqs, swaps, limit-orders, transfers,
requests, deliveries, makers, clock, state), and the readers of the console's live stream
(GET /_sim/stream) it fans out to. The timelines, the request journal, the webhook outbox, the
clock and the state control mark what they change.

With nobody subscribed a mark is one truth test: the console costs nothing while no page is
open. With readers, the marks gather in ONE set per topic (a burst of changes to one object is
sent once); the stream's publisher takes them, renders each topic once and hands the same bytes
to every reader (`publish`), so the cost of a change does not grow with the readers.

Readers are capped (`max_subscribers`: one more is refused with 429), and each reader's chunks
not yet written are bounded (`max_queued_bytes`): a reader that stops reading is dropped (its
connection hung up) rather than buffered without end. A dropped console page reconnects and
reads everything again.

Several instances: the venue's stream is read at its first instance, and what another instance
holds (its RFQs) changes there. The first asks the others, while it has readers, what changed
since it last asked (`watched`: ids only, rendered by the instance that holds them) and hands
their items to its readers (`relayed`). A watch nobody takes from stops at `WATCH_MAX_IDS`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any

from simulator.errors import RateLimited

log = logging.getLogger(__name__)

DEFAULT_MAX_SUBSCRIBERS = 64
DEFAULT_MAX_QUEUED_BYTES = 1 << 20
FULL_RETRY_AFTER_S = 5  # over the cap: a reader may try again this much later
WATCH_MAX_IDS = 5_000  # a watch not taken from for this many changes stops (bounded memory)


class Subscription:
    def __init__(self, topics: frozenset[str], max_queued_bytes: int) -> None:
        self.topics = topics  # what this reader wants
        self.max_queued_bytes = max_queued_bytes
        self.pending: list[bytes] = []  # chunks published but not yet taken by the writer
        self.queued = 0  # their bytes
        self.wake = asyncio.Event()  # set when a chunk arrives, or the stream must end
        self.closed = False  # the stream ends: the simulator stops, or the reader was dropped
        self.dropped = False  # too slow: more than max_queued_bytes waited for it
        # The connection's hang-up (set by the HTTP handler): a writer stuck on a reader that
        # does not read is only freed by closing its connection.
        self.hang_up: Callable[[], None] | None = None
        # Whether its connection is still open (set by the HTTP handler). A reader that left
        # while nothing changed is only noticed at the next write; the cap asks this first.
        self.alive: Callable[[], bool] | None = None

    def deliver(self, chunk: bytes) -> bool:
        """Queue one chunk for the writer; False when that would pass the bound with chunks
        already waiting (a reader that keeps up takes any one chunk, however large)."""
        if self.pending and self.queued + len(chunk) > self.max_queued_bytes:
            return False
        self.pending.append(chunk)
        self.queued += len(chunk)
        self.wake.set()
        return True

    def take(self) -> list[bytes]:
        taken, self.pending, self.queued = self.pending, [], 0
        self.wake.clear()
        return taken

    def end(self) -> None:
        self.closed = True
        self.wake.set()


class ChangeFeed:
    def __init__(
        self,
        max_subscribers: int = DEFAULT_MAX_SUBSCRIBERS,
        max_queued_bytes: int = DEFAULT_MAX_QUEUED_BYTES,
    ) -> None:
        self.max_subscribers = max_subscribers
        self.max_queued_bytes = max_queued_bytes
        self._subscribers: list[Subscription] = []  # the open live streams
        self._dirty: dict[str, set[str]] = {}  # topic -> ids changed since the last take
        self.changed = asyncio.Event()  # set on the first mark after a take
        self.dropped = 0  # readers dropped for being too slow, since start
        self._watch: dict[str, set[str]] | None = None  # topic -> ids, for the first instance
        self._relayed: dict[str, dict[str, dict[str, Any]]] = {}  # topic -> id -> item

    def mark(self, topic: str, key: str = "") -> None:
        if self._subscribers:
            self._dirty.setdefault(topic, set()).add(key)
            self.changed.set()
        if self._watch is not None and (watched := self._watch.get(topic)) is not None:
            watched.add(key)
            if len(watched) > WATCH_MAX_IDS:
                self._watch = None  # its watcher stopped asking: it starts again if it asks

    def take(self) -> dict[str, set[str]]:
        """What changed since the last take, for the publisher."""
        taken, self._dirty = self._dirty, {}
        self.changed.clear()
        return taken

    def reading(self, topics: Collection[str]) -> bool:
        """Whether a reader wants any of `topics`."""
        return any(not s.topics.isdisjoint(topics) for s in self._subscribers)

    def watched(self, topics: Collection[str]) -> dict[str, set[str]] | None:
        """Of several instances, for the first: the ids of `topics` changed here since it last
        asked, or None when the watch starts now (its first call, or the first since the watch
        stopped: what changed meanwhile is not known)."""
        watch, self._watch = self._watch, {topic: set() for topic in topics}
        return watch if watch is not None and watch.keys() == self._watch.keys() else None

    def relayed(self, topic: str, items: Collection[dict[str, Any]]) -> None:
        """Items another instance rendered of what it holds, for the readers here."""
        if self._subscribers and items:
            kept = self._relayed.setdefault(topic, {})
            for item in items:
                kept[str(item["id"])] = item
            self.changed.set()

    def take_relayed(self) -> dict[str, list[dict[str, Any]]]:
        """The items relayed since the last take, per topic, for the publisher."""
        taken, self._relayed = self._relayed, {}
        return {topic: list(items.values()) for topic, items in taken.items()}

    def subscribe(self, topics: frozenset[str]) -> Subscription:
        """A new reader; over the cap, the spec's 429 envelope with Retry-After."""
        if len(self._subscribers) >= self.max_subscribers:
            for gone in [s for s in self._subscribers if s.alive is not None and not s.alive()]:
                gone.end()  # its stream ends at once (the connection is closed already)
                self.unsubscribe(gone)
        if len(self._subscribers) >= self.max_subscribers:
            raise RateLimited(
                f"The live stream has its maximum of {self.max_subscribers} readers",
                details={
                    "reason": "stream_readers",
                    "cap": self.max_subscribers,
                    "retryAfterS": FULL_RETRY_AFTER_S,
                },
                headers={"Retry-After": str(FULL_RETRY_AFTER_S)},
            )
        subscription = Subscription(topics, self.max_queued_bytes)
        self._subscribers.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)
        if not self._subscribers:
            self._dirty.clear()  # nobody left to tell: the next reader starts from a load
            self._relayed.clear()

    def publish(self, rendered: Mapping[str, bytes]) -> None:
        """Hand each reader the rendered topics it asked for, in `rendered`'s order: readers
        asking for the same topics get the same bytes object. A reader whose queue would pass
        its bound is dropped."""
        joined: dict[frozenset[str], bytes] = {}
        for subscriber in list(self._subscribers):
            chunk = joined.get(subscriber.topics)
            if chunk is None:
                chunk = b"".join(c for t, c in rendered.items() if t in subscriber.topics)
                joined[subscriber.topics] = chunk
            if chunk and not subscriber.deliver(chunk):
                self._drop(subscriber)

    def _drop(self, subscriber: Subscription) -> None:
        log.warning(
            "live stream reader dropped: it read too slowly (%d bytes waiting, bound %d); "
            "it may reconnect and read everything again",
            subscriber.queued,
            subscriber.max_queued_bytes,
        )
        self.dropped += 1
        subscriber.dropped = True
        subscriber.pending, subscriber.queued = [], 0  # its memory goes now, not at hang-up
        subscriber.end()
        self.unsubscribe(subscriber)
        if subscriber.hang_up is not None:
            subscriber.hang_up()

    def close(self) -> None:
        """The simulator stops: every reader is woken to end its stream at once, and so is the
        publisher."""
        for subscriber in self._subscribers:
            subscriber.end()
        self.changed.set()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)
