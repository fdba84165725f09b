"""What happened to each ramp transfer, as data (GET /_sim/transfers): created (side, amounts,
the provider's id), every provider view taken (webhook, re-check, sweep) and whether it moved the
transfer, each status change with its cause. Provider views that change nothing are recorded
too: a refused backwards step is what a person looking at a stuck transfer wants to see."""

from __future__ import annotations

from typing import NamedTuple

from simulator.services.ramp.model import STATUSES
from simulator.services.shared.timelines import SimTime, StatusStep, StepKinds


class TransferCreatedStep(NamedTuple):
    """The transfer was created (retry_of: the transfer it retries, if one)."""

    at: SimTime
    kind: str
    side: str
    provider: str
    provider_transfer_id: str | None
    retry_of: str | None


class TransferProviderStep(NamedTuple):
    """A provider view was taken. source: where it came from; word: the provider's status;
    outcome: applied (moved), unchanged, or ignored with the reason."""

    at: SimTime
    kind: str
    source: str
    word: str
    outcome: str
    reason: str | None


TRANSFER_STEPS = StepKinds(
    {"created": TransferCreatedStep, "provider": TransferProviderStep, "status": StatusStep},
    STATUSES,
)
