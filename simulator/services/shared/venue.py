"""What the venue is made of on each chain: contract addresses, tokens and corridors. Built once at
start-up by the chain adapters (chains without contracts from the settings, by the app factory);
read by every service. Plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from simulator.settings import ChainEnvironment, CorridorTiming


@dataclass(frozen=True)
class VenueToken:
    symbol: str
    name: str
    address: str  # checksummed
    decimals: int
    usdt_like: bool


@dataclass(frozen=True)
class VenueCorridor:
    base: VenueToken
    quote: VenueToken
    timing: CorridorTiming  # mode, reply budget, TTL, preferred wait, fee

    @property
    def pair_id(self) -> str:
        return f"{self.base.symbol}_{self.quote.symbol}"


@dataclass(frozen=True)
class VenueContracts:
    signature_transfer: str  # Permit2-compatible signature transfer
    reactor: str  # settlement reactor
    router: str  # sample aggregator router
    wallet_factory: str  # CREATE2 factory of ERC-1271 smart wallets
    fee_recipient: str  # receives the protocol fee (an EOA)


@dataclass(frozen=True)
class ChainVenue:
    chain_id: int
    environment: ChainEnvironment
    name: str
    rpc_url: str
    managed: bool  # True when rfqsim started this Anvil (and will stop it)
    min_size: Decimal  # whole tokens
    contracts: VenueContracts
    tokens: tuple[VenueToken, ...]
    corridors: tuple[VenueCorridor, ...]

    def token(self, address: str) -> VenueToken | None:
        lowered = address.lower()
        return next((t for t in self.tokens if t.address.lower() == lowered), None)

    def corridor_for(self, sell: str, buy: str) -> VenueCorridor | None:
        """The corridor serving a pair in either direction."""
        pair = {sell.lower(), buy.lower()}
        for corridor in self.corridors:
            if {corridor.base.address.lower(), corridor.quote.address.lower()} == pair:
                return corridor
        return None


@dataclass(frozen=True)
class ChainWithoutContracts:
    """A chain the venue knows but has not deployed on: no node, no tokens, no corridors."""

    chain_id: int
    environment: ChainEnvironment
    name: str


@dataclass
class VenueDirectory:
    chains: dict[int, ChainVenue] = field(default_factory=dict)  # by chain id, filled at start-up
    # Known chains without a settlement contract (settings `chains_without_contracts`), by id.
    without_contracts: dict[int, ChainWithoutContracts] = field(default_factory=dict)

    def chain(self, chain_id: int) -> ChainVenue | None:
        return self.chains.get(chain_id)
