"""The swaps area as handlers and the wiring see it: built by runtime/swaps.py `build_swaps` and
reached through the `SWAPS` app key."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.shared.events import EventLog
from simulator.services.shared.timelines import Timelines
from simulator.services.swaps.service import SwapService


@dataclass
class SwapsArea:
    service: SwapService  # quotes, swaps, their statuses and settlement
    events: EventLog  # swap.filled (the webhooks area subscribes)
    history: Timelines  # every swap's timeline (GET /_sim/swaps)
