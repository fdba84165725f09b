"""The v1 swaps' wiring: `build_swaps`, over the book it composes from. Swaps have no background
work of their own: their statuses follow reads and the fill index."""

from __future__ import annotations

from simulator.api.swaps.events import swap_events
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.timelines import timelines
from simulator.services.limit_orders.area import BookArea
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.events import EventLog, EventLogSaved
from simulator.services.shared.state import SavedAttributes, StateParticipant
from simulator.services.shared.timelines import EventSteps, TimelineState
from simulator.services.swaps.area import SwapsArea
from simulator.services.swaps.history import SWAP_STEPS
from simulator.services.swaps.service import SwapService
from simulator.services.swaps.store import SwapStore, SwapStoreSaved
from simulator.settings import Settings


def build_swaps(
    settings: Settings,
    clock: Clock,
    random: RandomSource,
    book: BookArea,
    changes: ChangeFeed | None = None,
) -> SwapsArea:
    events = EventLog()
    history = timelines("swaps", SWAP_STEPS, clock, settings, changes)
    events.subscribers.append(EventSteps(history))
    service = SwapService(
        clock,
        random.fork("swaps"),
        book.service,
        SwapStore(),
        swap_events(events),
        settings.book,
        history,
    )
    return SwapsArea(service=service, events=events, history=history)


def swaps_state(area: SwapsArea) -> list[StateParticipant]:
    """Every swap record and the swap.filled event log."""
    return [
        SavedAttributes("swaps.store", area.service.store, SwapStoreSaved),
        SavedAttributes("swaps.events", area.events, EventLogSaved),
        TimelineState("swaps.timelines", area.history),
    ]
