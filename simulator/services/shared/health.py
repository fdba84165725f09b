"""The one model of the simulator's dependencies and their health, behind GET /v2/health,
/v1/health and /v1/status. No I/O here.

A dependency is named `chain:<chainId>` (the chain's JSON-RPC node), `fillIndex:<chainId>` (the
fill indexer following that chain) or `provider:<id>` (the ramp provider). One probe
(`DependencyProbe`; adapters/chain/probes.py) reads a chain's head and an index's progress.

- The health endpoints show what was last seen (`DependencyHealth`): the chain supervisor
  (runtime/chains.py) probes every chain and its index once a second, the provider monitor its
  provider. 200 while the process is up; `degraded` while any dependency is down.
- /v1/status probes the chains at the moment it is asked (`StatusService`) and judges them
 : a chain is critical, since nothing can be quoted, built, verified or
  settled on it without its node (`down`, 503); a fill index is not, since trades still settle
  and only statuses and events lag until it catches up (`degraded`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from simulator.clock import Clock
from simulator.services.shared.venue import VenueDirectory

DependencyStatus = Literal["up", "down"]
CheckKind = Literal["chain", "fillIndex"]
OverallStatus = Literal["operational", "degraded", "down"]


# -- what a probe sees -------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeResult:
    up: bool
    reason: str | None = None  # why it is down: unreachable, paused, stalled, not_running, ...
    block: int | None = None  # the chain's head, or the last block the index has scanned
    # A person's account of a failure (the node's error), shown by the health endpoints.
    detail: str | None = field(default=None, compare=False)


class DependencyProbe(Protocol):
    async def chain(self, chain_id: int) -> ProbeResult:
        """One cheap read of the chain's head within a short timeout; never raises."""
        ...

    def fill_index(self, chain_id: int) -> ProbeResult:
        """Whether the chain's fill index is following the chain; never raises."""
        ...


# -- what was last seen (the health endpoints) -------------------------------------------------


@dataclass
class DependencyState:
    status: DependencyStatus
    detail: str | None  # why it is down (or a note while up), never a secret
    since: float  # service time of the last change of status


class DependencyHealth:
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now  # the service clock's time()
        self._states: dict[str, DependencyState] = {}  # by dependency name (chain:97, ...)

    def report(self, name: str, up: bool, detail: str | None = None) -> bool:
        """Record what was just seen; True when the status changed (callers log changes)."""
        status: DependencyStatus = "up" if up else "down"
        current = self._states.get(name)
        if current is not None and current.status == status:
            current.detail = detail
            return False
        self._states[name] = DependencyState(status=status, detail=detail, since=self._now())
        return True

    def forget(self, name: str) -> None:
        self._states.pop(name, None)

    def get(self, name: str) -> DependencyState | None:
        return self._states.get(name)

    def snapshot(self) -> dict[str, DependencyState]:
        return dict(sorted(self._states.items()))

    @property
    def overall(self) -> Literal["ok", "degraded"]:
        """`ok` while every dependency is up; `degraded` when any is down (the process serves
        what does not depend on it)."""
        return "ok" if all(s.status == "up" for s in self._states.values()) else "degraded"


# -- what is seen now (/v1/status) -------------------------------------------------------------


@dataclass(frozen=True)
class StatusCheck:
    name: str  # `chain:97`, `fillIndex:97`
    kind: CheckKind
    chain_id: int
    critical: bool  # a critical check that is down makes the service `down`
    result: ProbeResult

    @property
    def status(self) -> DependencyStatus:
        return "up" if self.result.up else "down"

    @property
    def reason(self) -> str | None:
        return self.result.reason

    @property
    def block_number(self) -> int | None:
        return self.result.block


@dataclass(frozen=True)
class StatusReport:
    status: OverallStatus
    checked_at: float  # simulator time
    checks: tuple[StatusCheck, ...]

    @property
    def http_status(self) -> int:
        return 503 if self.status == "down" else 200

    @property
    def checks_by_name(self) -> dict[str, StatusCheck]:
        return {check.name: check for check in self.checks}


def overall(checks: Sequence[StatusCheck]) -> OverallStatus:
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

    async def status(self) -> StatusReport:
        """Every configured chain is checked, started or not: a chain the venue does not serve
        (yet) is down with reason `not_started`."""
        results = await asyncio.gather(*(self._chain(c) for c in self._chain_ids))
        checks: list[StatusCheck] = []
        for chain_id, chain_result in zip(self._chain_ids, results, strict=True):
            checks.append(StatusCheck(f"chain:{chain_id}", "chain", chain_id, True, chain_result))
            index_result = (
                self._probe.fill_index(chain_id)
                if self._venue.chain(chain_id) is not None
                else ProbeResult(up=False, reason="not_started")
            )
            checks.append(
                StatusCheck(f"fillIndex:{chain_id}", "fillIndex", chain_id, False, index_result)
            )
        return StatusReport(overall(checks), self._clock.time(), tuple(checks))

    async def _chain(self, chain_id: int) -> ProbeResult:
        if self._venue.chain(chain_id) is None:
            return ProbeResult(up=False, reason="not_started")
        return await self._probe.chain(chain_id)
