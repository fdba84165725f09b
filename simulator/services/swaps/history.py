"""What happened to each v1 swap, as data (GET /_sim/swaps): built (its orders and what it would
sell and receive), submitted, each order's fill, every status change with its cause, the events."""

from __future__ import annotations

from simulator.services.shared.timelines import StepKinds

SWAP_STEPS: StepKinds = {
    # orders: [[limit order id, maker]] in matching order; sold: what leaves the taker (fee
    # included); proceeds: what it receives
    "built": ("caller", "taker", "orders", "sold", "proceeds", "expires_at"),
    "submitted": ("tx_hash",),
    "fill": ("maker", "order_id", "tx_hash", "block", "maker_gave", "maker_received", "fee"),
    "status": ("status", "cause"),
    "event": ("type", "id"),
}
