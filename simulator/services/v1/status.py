"""GET /v1/status (spec 3 "Endpoints": 200 operational or degraded; 503 down when a critical
dependency is unavailable), with per-dependency checks as DESIGN.md "/v1/status" describes.

Which dependency is critical (docs/decisions.md V5):

- `chain:<id>` (critical): the chain's JSON-RPC node. Without it nothing can be quoted against
  live funding, built, verified or settled on that chain: the service is `down`.
- `fillIndex:<id>` (not critical): the fill indexer that reconciles settlements. Paused or
  stalled, trades still build and settle on chain; only statuses and events lag until it
  catches up (fills are found late, never lost): the service is `degraded`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from simulator.clock import Clock
from simulator.services.shared.venue import VenueDirectory
from simulator.services.v1.ports import DependencyProbe, ProbeResult

OverallStatus = Literal["operational", "degraded", "down"]
CheckKind = Literal["chain", "fillIndex"]


@dataclass(frozen=True)
class DependencyCheck:
    name: str  # `chain:97`, `fillIndex:97`
    kind: CheckKind
    chain_id: int
    critical: bool  # a critical check that is down makes the service `down`
    result: ProbeResult


@dataclass(frozen=True)
class ServiceStatus:
    status: OverallStatus
    checked_at: float  # simulator time
    checks: tuple[DependencyCheck, ...]

    @property
    def http_status(self) -> int:
        return 503 if self.status == "down" else 200


def overall(checks: Sequence[DependencyCheck]) -> OverallStatus:
    down = [c for c in checks if not c.result.up]
    if any(c.critical for c in down):
        return "down"
    return "degraded" if down else "operational"


class StatusService:
    def __init__(
        self,
        clock: Clock,
        venue: VenueDirectory,
        probe: DependencyProbe,
        chain_ids: Sequence[int],
    ) -> None:
        self._clock = clock
        self._venue = venue
        self._probe = probe
        self._chain_ids = tuple(sorted(chain_ids))  # the deployed chains the settings name

    async def status(self) -> ServiceStatus:
        """Every configured chain is checked, started or not: a chain the venue does not serve
        (yet) is down with reason `not_started`."""
        results = await asyncio.gather(*(self._chain(c) for c in self._chain_ids))
        checks: list[DependencyCheck] = []
        for chain_id, chain_result in zip(self._chain_ids, results, strict=True):
            checks.append(
                DependencyCheck(f"chain:{chain_id}", "chain", chain_id, True, chain_result)
            )
            index_result = (
                self._probe.fill_index(chain_id)
                if self._venue.chain(chain_id) is not None
                else ProbeResult(up=False, reason="not_started")
            )
            checks.append(
                DependencyCheck(f"fillIndex:{chain_id}", "fillIndex", chain_id, False, index_result)
            )
        return ServiceStatus(overall(checks), self._clock.time(), tuple(checks))

    async def _chain(self, chain_id: int) -> ProbeResult:
        if self._venue.chain(chain_id) is None:
            return ProbeResult(up=False, reason="not_started")
        return await self._probe.chain(chain_id)
