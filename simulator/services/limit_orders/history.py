"""What happened to each v1 limit order, as data (GET /_sim/limit-orders): placed (its terms),
held by a swap, filled (by whom: the taker of a swap or a filling operator), superseded,
cancelled or expired with the cause, and the events. A prepare that is never placed creates no
order, so a timeline starts at the placement."""

from __future__ import annotations

from simulator.services.shared.timelines import StepKinds

CANCELLED_CAUSE = "its nonce is spent on chain with no fill indexed"

LIMIT_ORDER_STEPS: StepKinds = {
    "placed": ("caller", "maker", "nonce", "deadline_at"),
    "held": ("swap_id", "taker", "until_at"),  # a v1 swap composed it
    "fill": ("taker", "tx_hash", "block", "maker_gave", "maker_received", "fee"),
    "status": ("status", "cause"),
    "event": ("type", "id"),
}
