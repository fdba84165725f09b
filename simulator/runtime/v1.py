"""build_v1: the v1 area's status (probing the chains and the fill indexers through the health
model's probe) and the venue the corridor list reads."""

from __future__ import annotations

from simulator.clock import Clock
from simulator.services.shared.health import DependencyProbe, StatusService
from simulator.services.shared.venue import VenueDirectory
from simulator.services.v1.area import V1Area
from simulator.settings import Settings


def build_v1(
    settings: Settings, clock: Clock, venue: VenueDirectory, *, probe: DependencyProbe
) -> V1Area:
    """`probe` reads the chains' heads and the fill indexers (adapters/chain/probes.py)."""
    status = StatusService(clock, venue, probe, [c.chain_id for c in settings.chains])
    return V1Area(status=status, venue=venue)
