"""The body of swap.filled (spec 3 "Events"), rendered from the record by the field types of GET
/v1/swaps/{id} (api/swaps/schemas.py); the swaps' builder hands `swap_events` to the service."""

from __future__ import annotations

from typing import Any

from simulator.api.http.responses import event_body
from simulator.api.swaps import schemas
from simulator.services.shared.events import EventSink
from simulator.services.swaps.events import SwapEvents, SwapEventType
from simulator.services.swaps.model import SwapRecord


def swap_event_body(
    event_type: SwapEventType, record: SwapRecord, created: float
) -> dict[str, Any]:
    data = {"swap": schemas.SwapEventSwap.model_validate(record)}
    return event_body(schemas.SwapFilledEvent, event_type, record.swap_id, created, data)


def swap_events(log: EventSink) -> SwapEvents:
    return SwapEvents(log, swap_event_body, lambda record: (record.swap_id, record.partner_id))
