"""What happened to each v1 swap, as data (GET /_sim/swaps): built (its orders and what it would
sell and receive), submitted, each order's fill, every status change with its cause, the events."""

from __future__ import annotations

from typing import NamedTuple

from simulator.services.shared.timelines import (
    EventStep,
    SimTime,
    StatusStep,
    StepKinds,
    SubmittedStep,
)
from simulator.services.swaps.model import SWAP_STATUSES


class SwapBuiltStep(NamedTuple):
    """The swap was built. orders: [[limit order id, maker]] in matching order; sold: what
    leaves the taker (fee included); proceeds: what it receives."""

    at: SimTime
    kind: str
    caller: str
    taker: str
    orders: list[list[str]]
    sold: str
    proceeds: str
    expires_at: SimTime | None


class SwapFillStep(NamedTuple):
    """One of its orders filled on chain (order_id: which, when known)."""

    at: SimTime
    kind: str
    maker: str
    order_id: str | None
    tx_hash: str
    block: int | None
    maker_gave: str
    maker_received: str
    fee: str


SWAP_STEPS = StepKinds(
    {
        "built": SwapBuiltStep,
        "submitted": SubmittedStep,
        "fill": SwapFillStep,
        "status": StatusStep,
        "event": EventStep,
    },
    SWAP_STATUSES,
)
