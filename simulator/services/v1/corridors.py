"""GET /v1/corridors (spec 3 "Endpoints": optional chainId; omitted, all chains of the key's
environment). The corridor item's shape is ours (the spec says "not shown"): docs/decisions.md
V7, rendered by api/v1/schemas.py."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.access.callers import Caller
from simulator.services.access.environments import require_v1_chain, v1_chains
from simulator.services.shared.venue import ChainVenue, VenueCorridor, VenueDirectory


@dataclass(frozen=True)
class ListedCorridor:
    chain: ChainVenue
    corridor: VenueCorridor


def list_corridors(
    venue: VenueDirectory, caller: Caller, chain_id: int | None
) -> list[ListedCorridor]:
    """The corridors of one chain (checked as every v1 chain is: 400 unknown, other
    environment, no contract), or of every chain of the caller's environment; by chain id, then
    in the settings' order."""
    chains = (
        [require_v1_chain(venue, caller, chain_id)]
        if chain_id is not None
        else v1_chains(venue, caller)
    )
    return [ListedCorridor(chain, corridor) for chain in chains for corridor in chain.corridors]
