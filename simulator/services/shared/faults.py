"""Fault switches: rare paths forced on demand through /_sim/faults. Each adapter or service
that can fail that way reads its switch; nothing here fakes a response."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from simulator.services.shared.state import StateSchema


@dataclass
class Faults:
    chain_unreachable: set[int] = field(default_factory=set)  # chains whose RPC calls fail at once
    venue_paused: bool = False  # firm quotes answer 503 venue_unavailable
    internal_errors: int = 0  # the next N API requests fail with an unhandled fault (500)
    # Chains whose fill index is unreachable: fills there are not seen until it comes back, so a
    # fill can be indexed late (the spec's late-indexed fill that corrects failed/expired).
    indexer_paused: set[int] = field(default_factory=set)
    # API keys the simulator issued to its own maker fleet (the v1 book roles): their requests
    # are the simulator's own traffic and never take a fault meant for a client's next request.
    own_keys: set[str] = field(default_factory=set)

    def clear(self) -> None:
        self.chain_unreachable.clear()
        self.indexer_paused.clear()
        self.venue_paused = False
        self.internal_errors = 0

    def update(
        self,
        *,
        chain_unreachable: Iterable[int] | None = None,
        venue_paused: bool | None = None,
        internal_errors: int | None = None,
        indexer_paused: Iterable[int] | None = None,
    ) -> None:
        """Sets the switches given (a set replaces the old one whole); None leaves one as is."""
        if chain_unreachable is not None:
            self.chain_unreachable = set(chain_unreachable)
        if venue_paused is not None:
            self.venue_paused = venue_paused
        if internal_errors is not None:
            self.internal_errors = internal_errors
        if indexer_paused is not None:
            self.indexer_paused = set(indexer_paused)

    def take_internal_error(self, presented_key: str | None = None) -> bool:
        """True (and one fewer left) when the next request must fail as a server fault; never
        for a request that presents one of the fleet's own keys."""
        if self.internal_errors <= 0 or presented_key in self.own_keys:
            return False
        self.internal_errors -= 1
        return True


class InjectedErrors(Protocol):
    """Several instances: the venue's count of injected 500s (`Faults.internal_errors` is then
    each instance's hint that some may be left), so "the next N requests" are N at the venue,
    wherever they arrive (adapters/redis/faults.py)."""

    async def take(self) -> bool:
        """One taken (True), or none left at the venue."""
        ...

    def set(self, count: int) -> None:
        """The venue has `count` left (does not wait)."""
        ...


class FaultsSaved(StateSchema):
    """What reset and snapshots put back of the fault switches: all of them."""

    chain_unreachable: set[int]
    venue_paused: bool
    internal_errors: int
    indexer_paused: set[int]
    own_keys: set[str]
