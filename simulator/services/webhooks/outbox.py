"""Webhook deliveries: the outbox, the dispatcher that fills it from the event log, signing,
and the retry schedule (spec 1-rfq-v2 "Events"; schedule and timeout: docs/decisions.md).

One delivery is made per (event, endpoint). The event body is serialized once to compact JSON;
every attempt signs and sends exactly those bytes. A 2xx acknowledges; anything else (non-2xx,
timeout, connection error) is retried after the schedule's next delay, counted on the simulator
clock from the end of the failed attempt, so `/_sim/clock/advance` fast-forwards retries. After
the last scheduled attempt the delivery is `failed`. Nothing is lost while a receiver is down:
pending deliveries stay in the outbox until acknowledged or out of attempts; finished ones go to
the archive port (the history file)."""

from __future__ import annotations

import hashlib
import heapq
import hmac
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.shared.events import Event
from simulator.services.shared.state import StateSchema
from simulator.services.webhooks.model import (
    Attempt,
    Delivery,
    DeliveryFilter,
    DeliveryStatus,
    creation_key,
    detached,
)
from simulator.services.webhooks.ports import DeliveryArchive
from simulator.services.webhooks.registry import WebhookRegistry

log = logging.getLogger("rfqsim.webhooks")

EVENT_ID_HEADER = "Service-Event-Id"
SIGNATURE_HEADER = "Service-Signature"


def encode_body(body: dict[str, Any]) -> bytes:
    """The one serialization of an event: compact JSON, ASCII-only."""
    return json.dumps(body, separators=(",", ":")).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """Hex HMAC-SHA256 keyed with the full signing secret (UTF-8) over b"<t>." + raw body."""
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    return f"t={timestamp},v1={signature(secret, timestamp, body)}"


def delivery_headers(event_id: str, secret: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        EVENT_ID_HEADER: event_id,
        SIGNATURE_HEADER: signature_header(secret, timestamp, body),
    }


def is_acknowledged(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


@dataclass
class DeliveryFaults:
    """/_sim/webhooks/faults: misbehaviour of the sending side, for receivers to prove they cope."""

    duplicate: bool = False  # send every attempt twice (the receiver must dedupe on the id)
    delay_ms: int = 0  # hold each attempt this long (real time) before sending it
    drop_first: int = 0  # attempts 1..N of each delivery fail without anything being sent

    def clear(self) -> None:
        self.duplicate, self.delay_ms, self.drop_first = False, 0, 0

    def update(
        self, *, duplicate: bool | None, delay_ms: int | None, drop_first: int | None
    ) -> None:
        """Sets the switches given; None leaves a switch as it is."""
        if duplicate is not None:
            self.duplicate = duplicate
        if delay_ms is not None:
            self.delay_ms = delay_ms
        if drop_first is not None:
            self.drop_first = drop_first


WorkListener = Callable[[], None]


class DeliveryOutbox:
    """Deliveries with attempts still to make, in memory, with the due-time index the worker
    drains. A finished one (delivered, failed, cancelled) goes to the archive (the history
    file: ports.py `DeliveryArchive`) as soon as no attempt on it is under way, and is
    forgotten there `webhooks.keep_finished_s` after its last attempt; reads see memory first,
    then the archive, each delivery once.

    An attempt works on one live object: the worker `hold`s a delivery for each attempt (a
    finished one is read back from the archive into `_held`) and `release`s it at the end, so
    two attempts on the same delivery never write over each other's."""

    def __init__(self, schedule: Sequence[float], archive: DeliveryArchive) -> None:
        if not schedule:
            raise ValueError("the retry schedule needs at least one attempt")
        self.schedule = tuple(schedule)  # delay before attempt n+1, after attempt n ended
        self.archive = archive
        self._deliveries: dict[str, Delivery] = {}  # pending, by delivery id, in creation order
        self._due: list[tuple[float, int, str]] = []  # heap (due, seq, id); stale entries skipped
        self._seq = 0  # tie-breaker of the heap: equal due times go in insertion order
        self._serial = 0  # the last `Delivery.serial` given out
        self._held: dict[str, Delivery] = {}  # finished, an attempt under way (not saved)
        self._busy: dict[str, int] = {}  # attempts under way per delivery id (not saved)
        self._listeners: list[WorkListener] = []  # told when new work may be due
        self.changes: Callable[[str, str], None] | None = None  # the live feed (console)

    def add_listener(self, listener: WorkListener) -> None:
        self._listeners.append(listener)

    def restored(self) -> None:
        """The pending deliveries were put back (reset, snapshot, state directory): attempts
        under way belong to the state before, and the worker looks at the due times again."""
        self._held, self._busy = {}, {}
        self._notify()

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()

    def _schedule(self, delivery: Delivery, due: float) -> None:
        delivery.next_attempt_at = due
        self._seq += 1
        heapq.heappush(self._due, (due, self._seq, delivery.delivery_id))

    def _changed(self, delivery: Delivery) -> None:
        if self.changes is not None:
            self.changes("deliveries", delivery.delivery_id)

    def add(self, delivery: Delivery) -> None:
        self._serial += 1
        delivery.serial = self._serial
        self._deliveries[delivery.delivery_id] = delivery
        self._schedule(delivery, delivery.created_at + self.schedule[0])
        self._notify()
        self._changed(delivery)

    def _in_memory(self, delivery_id: str) -> Delivery | None:
        return self._deliveries.get(delivery_id) or self._held.get(delivery_id)

    def get(self, delivery_id: str) -> Delivery | None:
        """The delivery as it stands (one from the archive is a copy: change it through
        `hold`)."""
        return self._in_memory(delivery_id) or self.archive.get(delivery_id)

    def __iter__(self) -> Iterator[Delivery]:
        """The deliveries in memory: pending, and finished ones with an attempt under way."""
        return iter([*self._deliveries.values(), *self._held.values()])

    def __len__(self) -> int:
        return len(self._deliveries) + len(self._held)

    def hold(self, delivery_id: str) -> Delivery | None:
        """The live delivery for one more attempt, kept in memory until `release`."""
        delivery = self._in_memory(delivery_id)
        if delivery is None:
            delivery = self.archive.get(delivery_id)
            if delivery is None:
                return None
            self._held[delivery_id] = delivery
        self._busy[delivery_id] = self._busy.get(delivery_id, 0) + 1
        return delivery

    def release(self, delivery: Delivery) -> None:
        """An attempt that `hold` (or `take_due`) began has ended; a finished delivery with
        no attempt left under way goes to the archive, as it now stands."""
        delivery_id = delivery.delivery_id
        if self._in_memory(delivery_id) is not delivery:
            return  # from before a reset or restore: that state is gone
        left = self._busy.get(delivery_id, 1) - 1
        if left > 0:
            self._busy[delivery_id] = left
            return
        self._busy.pop(delivery_id, None)
        if delivery.finished:
            self._held.pop(delivery_id, None)
            self.archive.put([detached(delivery)])
            self._changed(delivery)

    def _valid(self, due: float, delivery_id: str) -> Delivery | None:
        delivery = self._deliveries.get(delivery_id)
        if delivery is None or delivery.finished or delivery.next_attempt_at != due:
            return None
        return delivery

    def next_due(self) -> float | None:
        while self._due:
            due, _, delivery_id = self._due[0]
            if self._valid(due, delivery_id) is not None:
                return due
            heapq.heappop(self._due)
        return None

    def take_due(self, now: float) -> list[Delivery]:
        """Deliveries whose scheduled attempt is due; each is marked as started and held
        (`release` it when the attempt has ended)."""
        taken: list[Delivery] = []
        while self._due and self._due[0][0] <= now:
            due, _, delivery_id = heapq.heappop(self._due)
            delivery = self._valid(due, delivery_id)
            if delivery is None:
                continue
            delivery.next_attempt_at = None
            delivery.scheduled_attempts += 1
            self._busy[delivery_id] = self._busy.get(delivery_id, 0) + 1
            taken.append(delivery)
        return taken

    def start_attempt(self, delivery: Delivery) -> int:
        delivery.attempt_count += 1
        return delivery.attempt_count

    def record_duplicate(self, delivery: Delivery, attempt: Attempt) -> None:
        delivery.attempts.append(attempt)
        self._changed(delivery)

    def finish_attempt(
        self, delivery: Delivery, attempt: Attempt, ended_at: float, *, scheduled: bool
    ) -> None:
        """Apply one attempt's outcome: acknowledged → delivered; a failed scheduled attempt →
        the next one after the schedule's delay, or `failed` after the last. A manual attempt
        never moves the schedule; a success still completes the delivery."""
        delivery.attempts.append(attempt)
        self._changed(delivery)
        if attempt.outcome == "succeeded":
            # Also after a failure or a cancellation: the receiver did get the event.
            if delivery.status != "delivered":
                was_pending = delivery.status == "pending"
                delivery.status = "delivered"
                delivery.next_attempt_at = None
                if was_pending:
                    self._finish(delivery)
            return
        if not scheduled or delivery.status != "pending":
            return
        if delivery.scheduled_attempts >= len(self.schedule):
            delivery.status = "failed"
            self._finish(delivery)
            return
        self._schedule(delivery, ended_at + self.schedule[delivery.scheduled_attempts])
        self._notify()

    def cancel_endpoint(self, endpoint_id: str) -> int:
        """An endpoint was deleted: its pending deliveries stop. Returns how many."""
        going = [
            d
            for d in self._deliveries.values()
            if d.endpoint_id == endpoint_id and d.status == "pending"
        ]
        for delivery in going:
            delivery.status = "cancelled"
            delivery.next_attempt_at = None
            self._finish(delivery)
        return len(going)

    def _finish(self, delivery: Delivery) -> None:
        """Out of the pending ones: to the archive now, or at the `release` of the last
        attempt under way."""
        delivery_id = delivery.delivery_id
        if self._deliveries.get(delivery_id) is not delivery:
            return  # an attempt from before a reset or restore: that state is gone
        del self._deliveries[delivery_id]
        if self._busy.get(delivery_id, 0) > 0:
            self._held[delivery_id] = delivery
        else:
            self.archive.put([detached(delivery)])

    def forget_finished_before(self, before: float) -> None:
        """Forget the finished deliveries whose last attempt (`Delivery.ended_at`, service
        time) is before `before`: one query on the archive, whatever it holds."""
        self.archive.forget_finished_before(before)

    def find(
        self,
        *,
        endpoint_id: str | None = None,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int | None = None,
    ) -> list[Delivery]:
        """Matching deliveries, memory's and the archive's, in creation order (created_at,
        serial); with `limit`, the most recent ones."""
        where = DeliveryFilter(endpoint_id, event_id, status)
        in_memory = [d for d in self if where.matches(d)]
        # Held ones are in memory as they now stand; their rows are older.
        archived = self.archive.find(where, limit, set(self._held))
        found = sorted([*in_memory, *archived], key=creation_key)
        return found[-limit:] if limit is not None else found


class WebhookDispatcher:
    """Subscribed to the event log: one delivery per endpoint of the event's partner that wants
    the event's type. Events of keyless callers (no partner) go nowhere."""

    def __init__(
        self, clock: Clock, random: RandomSource, registry: WebhookRegistry, outbox: DeliveryOutbox
    ) -> None:
        self._clock = clock
        self._random = random  # delivery ids
        self._registry = registry
        self._outbox = outbox

    def publish(self, event: Event) -> None:
        # Called inside the RFQ state change that emitted the event: never raise into it.
        try:
            self._dispatch(event)
        except Exception:
            log.exception("webhook dispatch of %s failed", event.id)

    def _dispatch(self, event: Event) -> None:
        if event.partner_id is None:
            return
        endpoints = self._registry.subscribed(event.partner_id, event.type)
        if not endpoints:
            return
        body = encode_body(event.body)
        now = self._clock.time()
        for endpoint in endpoints:
            self._outbox.add(
                Delivery(
                    delivery_id=self._random.new_id("whd", 12),
                    endpoint_id=endpoint.endpoint_id,
                    partner_id=event.partner_id,
                    event_id=event.id,
                    event_type=event.type,
                    body=body,
                    created_at=now,
                )
            )


class OutboxSaved(StateSchema):
    """What reset and snapshots put back of the outbox: the pending deliveries, the due-time
    heap, its tie-breaker and the serial (the finished deliveries are in the history file,
    which reset and snapshots copy whole)."""

    deliveries: dict[str, Delivery] = Field(validation_alias="_deliveries")
    due: list[tuple[float, int, str]] = Field(validation_alias="_due")
    seq: int = Field(validation_alias="_seq")
    serial: int = Field(validation_alias="_serial")


class DeliveryFaultsSaved(StateSchema):
    """What reset and snapshots put back of the sending faults: all of them."""

    duplicate: bool
    delay_ms: int
    drop_first: int
