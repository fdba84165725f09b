"""What happened to each ramp transfer, as data (GET /_sim/transfers): created (side, amounts,
the provider's id), every provider view taken (webhook, re-check, sweep) and whether it moved the
transfer, each status change with its cause. Provider views that change nothing are recorded
too: a refused backwards step is what a person looking at a stuck transfer wants to see."""

from __future__ import annotations

from simulator.services.shared.timelines import StepKinds

TRANSFER_STEPS: StepKinds = {
    "created": ("side", "provider", "provider_transfer_id", "retry_of"),
    # source: where the view came from; word: the provider's status; outcome: applied (moved),
    # unchanged, or ignored with the reason
    "provider": ("source", "word", "outcome", "reason"),
    "status": ("status", "cause"),
}
