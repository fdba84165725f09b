"""Ports of the v1 status: how the service learns whether its dependencies answer. The adapter
(adapters/chain/probes.py) asks the chains and reads the fill indexers; unit tests use fakes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ProbeResult:
    up: bool
    reason: str | None = None  # why it is down: unreachable, paused, stalled, not_running, ...
    block: int | None = None  # the chain's head, or the last block the index has scanned


class DependencyProbe(Protocol):
    async def chain(self, chain_id: int) -> ProbeResult:
        """One cheap read of the chain's head within a short timeout; never raises."""
        ...

    def fill_index(self, chain_id: int) -> ProbeResult:
        """Whether the chain's fill index is following the chain; never raises."""
        ...
