"""build_v1: the v1 area's status (probing the chains and the fill indexers) and the venue the
corridor list reads."""

from __future__ import annotations

from rfqkit.chain import AnvilChain
from simulator.adapters.chain.probes import ChainDependencyProbe
from simulator.adapters.rfq.indexer import FillIndexer
from simulator.clock import Clock
from simulator.services.shared.faults import Faults
from simulator.services.shared.health import StatusService
from simulator.services.shared.venue import VenueDirectory
from simulator.services.v1.area import V1Area
from simulator.settings import Settings


def build_v1(
    settings: Settings,
    clock: Clock,
    venue: VenueDirectory,
    chains: dict[int, AnvilChain],
    indexers: dict[int, FillIndexer],
    faults: Faults,
) -> V1Area:
    probe = ChainDependencyProbe(chains, indexers, faults)
    status = StatusService(clock, venue, probe, [c.chain_id for c in settings.chains])
    return V1Area(status=status, venue=venue)
