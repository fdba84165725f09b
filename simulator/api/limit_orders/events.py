"""Bodies of the limit_order.* webhook events (spec 3 "Events"), rendered from the order by the
field types of GET /v1/limit-orders/{id} (api/limit_orders/schemas.py); the book's builder hands
`limit_order_events` to the book service and its sweep."""

from __future__ import annotations

from typing import Any

from simulator.api.http.responses import event_body
from simulator.api.limit_orders import schemas
from simulator.services.limit_orders.events import LimitOrderEvents
from simulator.services.limit_orders.model import LimitOrder, NoticeType
from simulator.services.shared.events import EventSink


def limit_order_event_body(
    event_type: NoticeType, order: LimitOrder, created: float
) -> dict[str, Any]:
    data = {"limit_order": schemas.LimitOrderEventOrder.model_validate(order)}
    return event_body(schemas.LimitOrderEvent, event_type, order.order_id, created, data)


def limit_order_events(log: EventSink) -> LimitOrderEvents:
    return LimitOrderEvents(
        log, limit_order_event_body, lambda order: (order.order_id, order.partner_id)
    )
