"""Events every area publishes (RFQ events today; v1 swap and limit-order events later) and the
log the webhooks area subscribes to: the outbox turns each event into deliveries to the
partner's endpoints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from simulator.services.shared.state import StateSchema

TypeT = TypeVar("TypeT", bound=str)
SubjectT = TypeVar("SubjectT")


@dataclass(frozen=True)
class Event:
    id: str  # <type>:<subject id> (rfq.filled:<rfq id>): stable, the receivers' dedupe key
    type: str
    created: float  # simulator time
    partner_id: str | None  # only this partner's endpoints receive it (None: nobody)
    body: dict[str, Any]


def event_of(data: dict[str, Any]) -> Event:
    """An event from its fields as `dataclasses.asdict` gave them (one instance of a venue
    hands its events to another's webhook worker)."""
    partner = data["partner_id"]
    return Event(
        id=str(data["id"]),
        type=str(data["type"]),
        created=float(data["created"]),
        partner_id=None if partner is None else str(partner),
        body=dict(data["body"]),
    )


class EventSink(Protocol):
    def publish(self, event: Event) -> None: ...


@dataclass
class EventLog:
    """The latest events emitted, in order, handed to every subscriber (the webhooks' outbox
    keeps its own deliveries). Only the last `keep` stay here: a log of every event ever would
    grow for as long as the simulator runs."""

    events: list[Event] = field(default_factory=list)
    subscribers: list[EventSink] = field(default_factory=list)
    keep: int = 1_000

    def publish(self, event: Event) -> None:
        self.events.append(event)
        if len(self.events) > self.keep + self.keep // 10:
            del self.events[: len(self.events) - self.keep]  # in chunks: amortised O(1)
        for subscriber in self.subscribers:
            subscriber.publish(event)


@dataclass(frozen=True)
class EventPublisher(Generic[TypeT, SubjectT]):
    """Publishes one area's events about its records (an RFQ, a limit order, a swap) on the
    area's log. The body is rendered by the API's code (`render`, api/<area>/events.py) from
    the record as it is now, with the models and field types the area's GET renders it with,
    so an event and a read of the same record cannot disagree."""

    log: EventSink
    render: Callable[[TypeT, SubjectT, float], dict[str, Any]]  # (type, record, created)
    subject: Callable[[SubjectT], tuple[str, str | None]]  # the record's id and partner

    def publish(self, event_type: TypeT, record: SubjectT, created: float) -> None:
        subject_id, partner_id = self.subject(record)
        self.log.publish(
            Event(
                id=f"{event_type}:{subject_id}",
                type=event_type,
                created=created,
                partner_id=partner_id,
                body=self.render(event_type, record, created),
            )
        )


class EventLogSaved(StateSchema):
    """What reset and snapshots put back of an event log: the events it keeps (not its
    subscribers)."""

    events: list[Event]
