"""swap.filled (spec 3 "Events"): fires when a tracked swap settles on chain; published through
an EventPublisher (services/shared/events.py) whose body api/swaps/events.py renders."""

from __future__ import annotations

from typing import Literal

from simulator.services.shared.events import EventPublisher
from simulator.services.swaps.model import SwapRecord

SwapEventType = Literal["swap.filled"]
SWAP_EVENT_TYPES: tuple[SwapEventType, ...] = ("swap.filled",)
SwapEvents = EventPublisher[SwapEventType, SwapRecord]
