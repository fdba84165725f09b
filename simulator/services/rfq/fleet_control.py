"""/_sim/makers: the makers online on the stream (ours and any integrator's bot) and the
simulated fleet, with live reconfiguration of one fleet member (behaviour, latency, prices,
online/offline). The fleet is reached through the SimulatedFleet port (adapters/rfq/fleet.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simulator.services.rfq.makers import MakerRegistry
from simulator.services.rfq.ports import FleetMemberStatus, SimulatedFleet


@dataclass(frozen=True)
class OnlineMakerStatus:
    maker_id: str  # the credential's public prefix
    wallet: str
    environment: str
    connected_at: float  # Unix seconds, simulated
    pairs_with_levels: int  # pair directions whose levels are fresh


@dataclass(frozen=True)
class MakersStatus:
    online: list[OnlineMakerStatus]
    fleet: list[FleetMemberStatus]


class MakerControl:
    def __init__(self, registry: MakerRegistry, fleet: SimulatedFleet) -> None:
        self._registry = registry
        self._fleet = fleet

    async def status(self) -> MakersStatus:
        registry = self._registry
        online = [
            OnlineMakerStatus(
                maker_id=maker.maker_id,
                wallet=maker.wallet,
                environment=maker.environment,
                connected_at=maker.connected_at,
                pairs_with_levels=sum(
                    1 for key in maker.levels if registry.fresh_curve(maker, key)
                ),
            )
            for maker in registry.online.values()
        ]
        return MakersStatus(online=online, fleet=await self._fleet.members())

    async def change(self, name: str, changes: Mapping[str, Any]) -> MakersStatus:
        """Reconfigure simulated maker `name`; the state afterwards. Errors as SimulatedFleet
        raises them (NotFound, InvalidRequest, UpstreamError)."""
        await self._fleet.reconfigure(name, changes)
        return await self.status()
