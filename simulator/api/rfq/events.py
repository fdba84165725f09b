"""Bodies of the rfq.* webhook events (spec 1-rfq-v2 "Events"), rendered from the record by the
models and field types of GET /v2/rfq/{rfq_id} (api/rfq/schemas.py), so an event and a read of
the same RFQ show the same values. The RFQ area's builder hands `rfq_events` to settlement."""

from __future__ import annotations

from typing import Any

from simulator.api.http.responses import event_body
from simulator.api.rfq import schemas
from simulator.services.rfq.events import EventType, RfqEvents
from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.events import EventSink


def rfq_event_body(event_type: EventType, record: StoredRfq, created: float) -> dict[str, Any]:
    shape = schemas.RfqFilledEventRfq if event_type == "rfq.filled" else schemas.RfqEventRfq
    # The rfq is validated by its own shape just above; validating it again through the
    # union of RfqEventData tried the filled shape from its attributes first, and that failed
    # attempt cost twice the rest of the body (59 of 93 µs per event, one per quote expiring).
    data = schemas.RfqEventData.model_construct(rfq=shape.model_validate(record))
    return event_body(schemas.RfqEvent, event_type, record.rfq_id, created, data)


def rfq_events(log: EventSink) -> RfqEvents:
    return RfqEvents(log, rfq_event_body, lambda record: (record.rfq_id, record.partner_id))
