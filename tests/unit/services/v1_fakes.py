"""A venue built by hand (no chain) for the v1 services' unit tests."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from simulator.services.access.callers import Caller
from simulator.services.access.keys import ApiKey, KeyEnvironment
from simulator.services.shared.venue import (
    ChainVenue,
    ChainWithoutContracts,
    VenueContracts,
    VenueCorridor,
    VenueDirectory,
    VenueToken,
)
from simulator.settings import ChainEnvironment, CorridorTiming

USDC = VenueToken("USDC", "USD Coin", "0x" + "11" * 20, 6, False)
NGNS = VenueToken("NGNS", "Naira Stable", "0x" + "22" * 20, 6, False)
USDT = VenueToken("USDT", "Tether USD", "0x" + "33" * 20, 18, True)


def chain(chain_id: int, environment: ChainEnvironment) -> ChainVenue:
    return ChainVenue(
        chain_id=chain_id,
        environment=environment,
        name=f"chain-{chain_id}",
        rpc_url="http://127.0.0.1:1",
        managed=True,
        min_size=Decimal("0.01"),
        contracts=VenueContracts(
            signature_transfer="0x" + "aa" * 20,
            reactor="0x" + "bb" * 20,
            router="0x" + "cc" * 20,
            wallet_factory="0x" + "dd" * 20,
            fee_recipient="0x" + "ee" * 20,
        ),
        tokens=(USDC, NGNS, USDT),
        corridors=(
            VenueCorridor(USDT, NGNS, CorridorTiming()),
            VenueCorridor(USDC, NGNS, CorridorTiming(mode="BOOK", fee_bps=7)),
        ),
    )


def venue() -> VenueDirectory:
    """Chains 56 (live) and 97 (test) deployed; 11155111 (test) known without contracts."""
    return VenueDirectory(
        chains={56: chain(56, "live"), 97: chain(97, "test")},
        without_contracts={11155111: ChainWithoutContracts(11155111, "test", "sepolia")},
    )


def caller(environment: KeyEnvironment | None) -> Caller:
    if environment is None:
        return Caller(ip="127.0.0.1", key=None)
    key = ApiKey(
        key_id=f"tx_{environment}_000000000001",
        partner_id="ptn_1",
        environment=environment,
        scopes=frozenset({"quotes:read"}),
        tier="default",
        name="",
        created_at=datetime.now(UTC),
        secret_hash=b"\0" * 32,
    )
    return Caller(ip="127.0.0.1", key=key)
