"""limit_order.* events (spec 3 "Events"), published through an EventPublisher
(services/shared/events.py) whose bodies api/limit_orders/events.py renders from the order.
Receivers key on data.limitOrder.id and let limit_order.filled win over an earlier
limit_order.cancelled (or expired) for the same order."""

from __future__ import annotations

from simulator.services.limit_orders.model import LimitOrder, NoticeType
from simulator.services.shared.events import EventPublisher

LIMIT_ORDER_EVENT_TYPES: tuple[NoticeType, ...] = (
    "limit_order.filled",
    "limit_order.expired",
    "limit_order.cancelled",
)
LimitOrderEvents = EventPublisher[NoticeType, LimitOrder]
