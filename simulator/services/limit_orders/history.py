"""What happened to each v1 limit order, as data (GET /_sim/limit-orders): placed (its terms),
held by a swap, filled (by whom: the taker of a swap or a filling operator), superseded,
cancelled or expired with the cause, and the events. A prepare that is never placed creates no
order, so a timeline starts at the placement."""

from __future__ import annotations

from typing import NamedTuple

from simulator.services.limit_orders.model import LIMIT_ORDER_STATUSES
from simulator.services.shared.timelines import EventStep, SimTime, StatusStep, StepKinds

CANCELLED_CAUSE = "its nonce is spent on chain with no fill indexed"


class LimitOrderPlacedStep(NamedTuple):
    """The order was placed (caller: who placed it; deadline_at: the order's deadline)."""

    at: SimTime
    kind: str
    caller: str
    maker: str
    nonce: int
    deadline_at: SimTime


class LimitOrderHeldStep(NamedTuple):
    """A v1 swap composed it: held for that swap's taker until the swap expires."""

    at: SimTime
    kind: str
    swap_id: str
    taker: str
    until_at: SimTime


class LimitOrderFillStep(NamedTuple):
    """It filled on chain (taker: whoever filled it; amounts in atomic units, as text)."""

    at: SimTime
    kind: str
    taker: str
    tx_hash: str
    block: int | None
    maker_gave: str
    maker_received: str
    fee: str


LIMIT_ORDER_STEPS = StepKinds(
    {
        "placed": LimitOrderPlacedStep,
        "held": LimitOrderHeldStep,
        "fill": LimitOrderFillStep,
        "status": StatusStep,
        "event": EventStep,
    },
    LIMIT_ORDER_STATUSES,
)
