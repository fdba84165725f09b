"""RFQ events (spec 1-rfq-v2 "Events"), published by settlement through an EventPublisher
(services/shared/events.py) whose bodies api/rfq/events.py renders from the record."""

from __future__ import annotations

from typing import Literal

from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.events import EventPublisher

EventType = Literal["rfq.filled", "rfq.failed", "rfq.expired"]
RFQ_EVENT_TYPES: tuple[EventType, ...] = ("rfq.filled", "rfq.failed", "rfq.expired")
RfqEvents = EventPublisher[EventType, StoredRfq]
