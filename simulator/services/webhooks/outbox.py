"""Webhook deliveries: the outbox, the dispatcher that fills it from the event log, signing,
and the retry schedule (spec 1-rfq-v2 "Events"; schedule and timeout: docs/decisions.md).

One delivery is made per (event, endpoint). The event body is serialized once to compact JSON;
every attempt signs and sends exactly those bytes. A 2xx acknowledges; anything else (non-2xx,
timeout, connection error) is retried after the schedule's next delay, counted on the simulator
clock from the end of the failed attempt, so `/_sim/clock/advance` fast-forwards retries. After
the last scheduled attempt the delivery is `failed`. Nothing is lost while a receiver is down:
pending deliveries stay in the outbox until acknowledged or out of attempts."""

from __future__ import annotations

import hashlib
import heapq
import hmac
import json
import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.shared.events import Event
from simulator.services.shared.state import StateSchema
from simulator.services.webhooks.registry import WebhookRegistry

log = logging.getLogger("rfqsim.webhooks")

EVENT_ID_HEADER = "Service-Event-Id"
SIGNATURE_HEADER = "Service-Signature"

DeliveryStatus = Literal["pending", "delivered", "failed", "cancelled"]
DELIVERY_STATUSES: tuple[DeliveryStatus, ...] = ("pending", "delivered", "failed", "cancelled")
AttemptOutcome = Literal["succeeded", "failed", "dropped"]


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


@dataclass(frozen=True)
class Attempt:
    number: int  # 1, 2, …: in the order attempts started (scheduled and manual alike)
    started_at: float  # simulator time the request was sent (or dropped)
    latency_ms: float | None  # request to response, monotonic; None when nothing was sent
    response_status: int | None  # the receiver's HTTP status; None on timeout/error/drop
    error: str | None  # "timeout", "connection_error: …", "dropped_by_fault"
    outcome: AttemptOutcome
    manual: bool = False  # made by /_sim/webhooks/deliveries/{id}/redeliver
    duplicate: bool = False  # the second copy sent by the `duplicate` fault (no effect on status)


@dataclass
class Delivery:
    delivery_id: str  # whd_…
    endpoint_id: str
    partner_id: str
    event_id: str  # <type>:<rfq id>, sent as Service-Event-Id
    event_type: str
    body: bytes = field(repr=False)  # serialized once; shared by the event's deliveries
    created_at: float  # simulator time
    status: DeliveryStatus = "pending"
    next_attempt_at: float | None = None  # next scheduled attempt; None: in flight or finished
    scheduled_attempts: int = 0  # attempts of the schedule started so far
    attempt_count: int = 0  # attempts started so far (scheduled + manual)
    attempts: list[Attempt] = field(default_factory=list)  # every attempt, duplicates included

    @property
    def finished(self) -> bool:
        return self.status != "pending"


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
    """In-memory store of deliveries and their attempts, with the due-time index the worker
    drains. Finished deliveries are kept for /_sim up to `keep_finished`, oldest dropped first."""

    def __init__(self, schedule: Sequence[float], keep_finished: int = 10_000) -> None:
        if not schedule:
            raise ValueError("the retry schedule needs at least one attempt")
        self.schedule = tuple(schedule)  # delay before attempt n+1, after attempt n ended
        self.keep_finished = keep_finished
        self._deliveries: dict[str, Delivery] = {}  # by delivery id, in creation order
        self._due: list[tuple[float, int, str]] = []  # heap (due, seq, id); stale entries skipped
        self._seq = 0  # tie-breaker of the heap: equal due times go in insertion order
        self._finished: deque[str] = deque()  # finished delivery ids, oldest first
        self._listeners: list[WorkListener] = []  # told when new work may be due
        self.changes: Callable[[str, str], None] | None = None  # the live feed (console)

    def add_listener(self, listener: WorkListener) -> None:
        self._listeners.append(listener)

    def wake(self) -> None:
        """Tell the listeners new work may be due (after the outbox was restored)."""
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
        self._deliveries[delivery.delivery_id] = delivery
        self._schedule(delivery, delivery.created_at + self.schedule[0])
        self._notify()
        self._changed(delivery)

    def get(self, delivery_id: str) -> Delivery | None:
        return self._deliveries.get(delivery_id)

    def __iter__(self) -> Iterator[Delivery]:
        return iter(list(self._deliveries.values()))

    def __len__(self) -> int:
        return len(self._deliveries)

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
        """Deliveries whose scheduled attempt is due; each is marked as started."""
        taken: list[Delivery] = []
        while self._due and self._due[0][0] <= now:
            due, _, delivery_id = heapq.heappop(self._due)
            delivery = self._valid(due, delivery_id)
            if delivery is None:
                continue
            delivery.next_attempt_at = None
            delivery.scheduled_attempts += 1
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
        cancelled = 0
        for delivery in self._deliveries.values():
            if delivery.endpoint_id == endpoint_id and delivery.status == "pending":
                delivery.status = "cancelled"
                delivery.next_attempt_at = None
                self._finish(delivery)
                cancelled += 1
        return cancelled

    def _finish(self, delivery: Delivery) -> None:
        self._finished.append(delivery.delivery_id)
        while len(self._finished) > self.keep_finished:
            self._deliveries.pop(self._finished.popleft(), None)

    def evict_finished(self, before: float) -> int:
        """Forget finished deliveries that ended before `before` (service time), oldest first;
        the count cap alone keeps up to `keep_finished` of them however old. Returns how many
        went."""
        gone = 0
        while self._finished:
            delivery = self._deliveries.get(self._finished[0])
            if delivery is not None:
                ended = delivery.attempts[-1].started_at if delivery.attempts else None
                if (ended if ended is not None else delivery.created_at) >= before:
                    break
                del self._deliveries[delivery.delivery_id]
                gone += 1
            self._finished.popleft()
        return gone

    def find(
        self,
        *,
        endpoint_id: str | None = None,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int | None = None,
    ) -> list[Delivery]:
        """Matching deliveries in creation order; with `limit`, the most recent ones."""
        found = [
            d
            for d in self._deliveries.values()
            if (endpoint_id is None or d.endpoint_id == endpoint_id)
            and (event_id is None or d.event_id == event_id)
            and (status is None or d.status == status)
        ]
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
    """What reset and snapshots put back of the outbox: every delivery, the due-time heap,
    the finished ones in order and the heap's tie-breaker."""

    deliveries: dict[str, Delivery] = Field(validation_alias="_deliveries")
    due: list[tuple[float, int, str]] = Field(validation_alias="_due")
    finished: deque[str] = Field(validation_alias="_finished")
    seq: int = Field(validation_alias="_seq")


class DeliveryFaultsSaved(StateSchema):
    """What reset and snapshots put back of the sending faults: all of them."""

    duplicate: bool
    delay_ms: int
    drop_first: int
