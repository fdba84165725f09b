"""The records of the webhooks area: one delivery of an event to an endpoint, with every attempt
made, as the outbox keeps it in memory while it is pending and the archive (ports.py
`DeliveryArchive`) keeps it once finished."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

DeliveryStatus = Literal["pending", "delivered", "failed", "cancelled"]
DELIVERY_STATUSES: tuple[DeliveryStatus, ...] = ("pending", "delivered", "failed", "cancelled")
AttemptOutcome = Literal["succeeded", "failed", "dropped"]


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
    serial: int = 0  # creation order among equal created_at (the outbox's counter)

    @property
    def finished(self) -> bool:
        return self.status != "pending"

    @property
    def ended_at(self) -> float:
        """When its last attempt started (its creation, before any): a finished delivery's
        lifetime in the archive counts from here."""
        return self.attempts[-1].started_at if self.attempts else self.created_at


def creation_key(delivery: Delivery) -> tuple[float, int]:
    """The order deliveries are listed in: creation time, then the outbox's serial."""
    return (delivery.created_at, delivery.serial)


def detached(delivery: Delivery) -> Delivery:
    """A copy no later attempt changes (attempts are frozen): what the archive gets, and what
    it gives back of a row not yet written."""
    return replace(delivery, attempts=list(delivery.attempts))


@dataclass(frozen=True)
class DeliveryFilter:
    """What `GET /_sim/webhooks/deliveries` (and a timeline's webhooks) select by; None: any."""

    endpoint_id: str | None = None
    event_id: str | None = None
    status: DeliveryStatus | None = None

    def matches(self, delivery: Delivery) -> bool:
        return (
            (self.endpoint_id is None or delivery.endpoint_id == self.endpoint_id)
            and (self.event_id is None or delivery.event_id == self.event_id)
            and (self.status is None or delivery.status == self.status)
        )
