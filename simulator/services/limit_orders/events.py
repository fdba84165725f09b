"""limit_order.* events (spec 3 "Events"): built from the record and published on the area's
event log (services/shared/events.py), which the webhook delivery engine drains. The body is the
spec's field for field; receivers key on data.limitOrder.id and let limit_order.filled win over
an earlier limit_order.cancelled (or expired) for the same order."""

from __future__ import annotations

from typing import Any

from simulator.clock import isoformat_unix
from simulator.services.limit_orders.model import LimitOrder, NoticeType
from simulator.services.shared.events import Event

LIMIT_ORDER_EVENT_TYPES: tuple[NoticeType, ...] = (
    "limit_order.filled",
    "limit_order.expired",
    "limit_order.cancelled",
)


def limit_order_body(order: LimitOrder) -> dict[str, Any]:
    filled = order.fill
    return {
        "id": order.order_id,
        "chainId": order.chain_id,
        "sellToken": order.sell_token,
        "sellAmount": str(order.sell_amount),
        "buyToken": order.buy_token,
        "buyAmount": str(order.buy_amount),
        "rateRay": str(order.rate_ray),
        "executionRateRay": str(order.execution_rate_ray),
        "deadline": isoformat_unix(order.deadline),
        "txHash": filled.tx_hash if filled is not None else None,
        "filledAt": isoformat_unix(filled.block_time) if filled is not None else None,
    }


def limit_order_event(event_type: NoticeType, order: LimitOrder, created: float) -> Event:
    event_id = f"{event_type}:{order.order_id}"
    body = {
        "id": event_id,
        "type": event_type,
        "created": isoformat_unix(created),
        "data": {"limitOrder": limit_order_body(order)},
    }
    return Event(
        id=event_id, type=event_type, created=created, partner_id=order.partner_id, body=body
    )
