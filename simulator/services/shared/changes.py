"""The change feed: which objects changed since a reader last looked, per topic (rfqs, swaps,
limit-orders, transfers, requests, deliveries, makers, clock, state). The console's live stream
(GET /_sim/stream) subscribes; the timelines, the request journal, the webhook outbox, the clock
and the state control mark what they change.

With nobody subscribed a mark is a loop over an empty list: the console costs nothing while no
page is open. A subscriber collects the ids marked since it last took them (a set per topic, so
a burst of changes to one object is sent once) and is woken when the first one arrives."""

from __future__ import annotations

import asyncio


class Subscription:
    def __init__(self, topics: frozenset[str]) -> None:
        self.topics = topics  # what this reader wants
        self.dirty: dict[str, set[str]] = {}  # topic -> ids changed since the last take
        self.wake = asyncio.Event()  # set on the first change after a take
        self.closed = False  # the simulator is stopping: the reader ends its stream

    def add(self, topic: str, key: str) -> None:
        if topic in self.topics:
            self.dirty.setdefault(topic, set()).add(key)
            self.wake.set()

    def take(self) -> dict[str, set[str]]:
        taken, self.dirty = self.dirty, {}
        self.wake.clear()
        return taken


class ChangeFeed:
    def __init__(self) -> None:
        self._subscribers: list[Subscription] = []  # the open live streams

    def mark(self, topic: str, key: str = "") -> None:
        for subscriber in self._subscribers:
            subscriber.add(topic, key)

    def subscribe(self, topics: frozenset[str]) -> Subscription:
        subscription = Subscription(topics)
        self._subscribers.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)

    def close(self) -> None:
        """The simulator stops: every reader is woken to end its stream at once."""
        for subscriber in self._subscribers:
            subscriber.closed = True
            subscriber.wake.set()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)
