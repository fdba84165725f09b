"""GET /v1/corridors (spec 3 "Endpoints": optional chainId; omitted, all chains of the key's
environment). The corridor item's shape is ours (the spec says "not shown"): docs/decisions.md
V7, rendered by api/v1/schemas.py."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.access.callers import Caller
from simulator.services.access.environments import require_v1_chain, v1_chains
from simulator.services.shared.venue import ChainVenue, VenueCorridor, VenueDirectory, VenueToken
from simulator.settings import CorridorMode


@dataclass(frozen=True)
class ListedCorridor:
    """One item of GET /v1/corridors under its wire names (api/v1/schemas.py `Corridor` is
    validated from it)."""

    chain_id: int
    pair: str  # <base symbol>_<quote symbol>
    mode: CorridorMode
    base: VenueToken
    quote: VenueToken
    fee_bps: int
    reactor: str  # the swaps' approval target
    signature_transfer: str  # what limit-order makers approve

    @classmethod
    def of(cls, chain: ChainVenue, corridor: VenueCorridor) -> ListedCorridor:
        return cls(
            chain_id=chain.chain_id,
            pair=corridor.pair_id,
            mode=corridor.timing.mode,
            base=corridor.base,
            quote=corridor.quote,
            fee_bps=corridor.timing.fee_bps,
            reactor=chain.contracts.reactor,
            signature_transfer=chain.contracts.signature_transfer,
        )


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
    return [ListedCorridor.of(chain, corridor) for chain in chains for corridor in chain.corridors]
