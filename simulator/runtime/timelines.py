"""One area's bounded timelines, wired to the settings' size and the app's change feed."""

from __future__ import annotations

from simulator.clock import Clock
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.timelines import StepKinds, Timelines
from simulator.settings import Settings


def timelines(
    topic: str, kinds: StepKinds, clock: Clock, settings: Settings, changes: ChangeFeed | None
) -> Timelines:
    return Timelines(
        topic,
        clock.time,
        kinds,
        capacity=settings.timelines.kept,
        changes=None if changes is None else changes.mark,
    )
