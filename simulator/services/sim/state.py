"""Reset and named snapshots of the whole simulator (POST /_sim/reset, /_sim/snapshots).

A point in time is the service state (every registered participant, services/shared/state.py)
and the chains' state, taken together under the request gate: no request is half done and no
fill is indexed on one side only (the fill indexers' cursors are participants too, so a fill
mined but not yet indexed at the snapshot is indexed again after the restore).

- The baseline is taken once start-up is complete (demo keys, makers connected with their levels
  at the server and their first resting orders in the book). Reset puts it back: the chains are
  reverted to their in-node mark (`evm_revert`, which also puts back their block time), every
  participant is loaded, the makers are restarted, with the gate still closed to everyone but
  the fleet's own requests (its start's first round goes through the API).
- A named snapshot holds the services' dump and each chain's full export: in-node marks would
  not do, because reverting to the baseline discards every mark taken after it. A restore is a
  reset followed by importing the chains' exports and loading the services.

One state change at a time (`_lock`); the gate keeps requests out while it runs.

Of a venue of several instances, the instance that serves a change first does all of this; each
other one then repeats it for its own services only (`chains=False`: the chains are one for the
venue and were already changed), leaving the venue's shared configuration as the first one made
it (`keep_prefixes`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from simulator.errors import Conflict, NotFound
from simulator.services.shared.state import StateRegistry
from simulator.services.sim.gate import RequestGate
from simulator.services.sim.ports import ChainStates, FleetRestart

MAX_SNAPSHOTS = 32  # each holds every chain's export (tens of kB each): bounded on purpose


@dataclass
class Snapshot:
    name: str
    created_at: float  # simulator time when taken
    taken_in: float  # seconds the capture took
    services: dict[str, dict[str, Any]]  # participant name -> its dump
    chains: dict[int, str]  # chain id -> anvil_dumpState export


@dataclass(frozen=True)
class Baseline:
    services: dict[str, dict[str, Any]]
    marks: dict[int, str]  # chain id -> evm_snapshot id of the post-start state


@dataclass(frozen=True)
class ChangeReport:
    """What a reset or restore did, for the response and the log."""

    took_s: float
    interrupted_requests: int  # requests cancelled by the gate (answered 503)
    kept: tuple[str, ...]  # participant prefixes left as they were


class StateControl:
    def __init__(
        self,
        registry: StateRegistry,
        gate: RequestGate,
        chains: ChainStates,
        fleet: FleetRestart,
        *,
        time: Callable[[], float],
        monotonic: Callable[[], float],
        keepable: dict[str, tuple[str, ...]],
    ) -> None:
        self.registry = registry
        self.gate = gate
        self._chains = chains
        self._fleet = fleet
        self._time = time  # simulator time (snapshot stamps)
        self._monotonic = monotonic  # durations
        self.keepable = keepable  # body word -> participant prefixes it keeps ("webhooks")
        self._baseline: Baseline | None = None  # set once start-up is complete
        self.snapshots: dict[str, Snapshot] = {}  # by name, in creation order
        self._lock = asyncio.Lock()  # one reset / snapshot / restore at a time

    @property
    def ready(self) -> bool:
        return self._baseline is not None

    async def take_baseline(self) -> None:
        """Called once, when start-up is complete: the state reset returns to."""
        marks = await self._chains.mark()
        self._baseline = Baseline(self.registry.dump(), marks)

    def _require_baseline(self) -> Baseline:
        if self._baseline is None:
            raise Conflict(
                "The simulator is still starting; state control is available once it is ready",
                details={"reason": "starting"},
            )
        return self._baseline

    def _prefixes(self, keep: Iterable[str]) -> tuple[str, ...]:
        return tuple(prefix for word in keep for prefix in self.keepable[word])

    async def reset(
        self,
        keep: Iterable[str] = (),
        *,
        chains: bool = True,
        keep_prefixes: tuple[str, ...] = (),
    ) -> ChangeReport:
        baseline = self._require_baseline()
        prefixes = self._prefixes(keep)
        async with self._lock:
            started = self._monotonic()
            async with self.gate.closed() as interrupted:
                await self._fleet.stop()
                try:
                    await self._back_to_baseline(baseline, prefixes + keep_prefixes, chains)
                    if chains:
                        # The revert put the chains' time back to the baseline's block; the
                        # service clock runs on from it.
                        await self._chains.follow_clock()
                finally:
                    with self.gate.own_requests_admitted():
                        await self._fleet.start(fresh_nonces=False)
            return ChangeReport(self._monotonic() - started, interrupted, prefixes)

    async def _back_to_baseline(
        self, baseline: Baseline, keep: tuple[str, ...], chains: bool
    ) -> None:
        if chains:
            await self._revert_chains(baseline)
        self._load(baseline.services, keep)

    def _load(self, services: dict[str, dict[str, Any]], keep: tuple[str, ...]) -> None:
        """Every participant from `services`, except those named by a prefix in `keep`, which
        stay as they are; no await: every participant changes in the same step of the loop."""
        kept = (
            {name: p for name, p in self.registry.dump().items() if name.startswith(keep)}
            if keep
            else {}
        )
        self.registry.load(services)
        if kept:
            self.registry.load(kept)

    async def _revert_chains(self, baseline: Baseline) -> None:
        marks = await self._chains.revert(baseline.marks)
        self._baseline = Baseline(baseline.services, marks)

    async def take_snapshot(self, name: str, *, chains: bool = True) -> Snapshot:
        self._require_baseline()
        if name in self.snapshots:
            raise Conflict(
                f"A snapshot named {name} exists; delete it first",
                details={"reason": "snapshot_exists", "name": name},
            )
        if len(self.snapshots) >= MAX_SNAPSHOTS:
            raise Conflict(
                f"{MAX_SNAPSHOTS} snapshots are kept at most; delete one first",
                details={"reason": "too_many_snapshots", "limit": MAX_SNAPSHOTS},
            )
        async with self._lock:
            started = self._monotonic()
            async with self.gate.closed():
                services = self.registry.dump()
                exports = await self._chains.export() if chains else {}
            snapshot = Snapshot(name, self._time(), self._monotonic() - started, services, exports)
            self.snapshots[name] = snapshot
            return snapshot

    def get_snapshot(self, name: str) -> Snapshot:
        snapshot = self.snapshots.get(name)
        if snapshot is None:
            raise NotFound(
                f"No snapshot named {name}", details={"reason": "unknown_snapshot", "name": name}
            )
        return snapshot

    def delete_snapshot(self, name: str) -> None:
        self.get_snapshot(name)
        del self.snapshots[name]

    async def restore(
        self, name: str, *, chains: bool = True, keep_prefixes: tuple[str, ...] = ()
    ) -> ChangeReport:
        baseline = self._require_baseline()
        snapshot = self.get_snapshot(name)
        if not chains:
            return await self._restore_services(snapshot.services, keep_prefixes)
        return await self.restore_state(snapshot.services, snapshot.chains, baseline=baseline)

    async def _restore_services(
        self, services: dict[str, dict[str, Any]], keep: tuple[str, ...]
    ) -> ChangeReport:
        """The services of a snapshot only (another instance of the venue restored the
        chains)."""
        async with self._lock:
            started = self._monotonic()
            async with self.gate.closed() as interrupted:
                await self._fleet.stop()
                try:
                    self._load(services, keep)
                finally:
                    with self.gate.own_requests_admitted():
                        await self._fleet.start(fresh_nonces=True)
            return ChangeReport(self._monotonic() - started, interrupted, ())

    async def restore_state(
        self,
        services: dict[str, dict[str, Any]],
        chains: dict[int, str],
        *,
        baseline: Baseline | None = None,
    ) -> ChangeReport:
        """Put back a captured state (a named snapshot, or a state directory at start-up)."""
        baseline = baseline or self._require_baseline()
        async with self._lock:
            started = self._monotonic()
            async with self.gate.closed() as interrupted:
                await self._fleet.stop()
                try:
                    # The chains first: a background task that reads them (the settlement
                    # sweep) must never see restored records on the baseline chain.
                    await self._revert_chains(baseline)
                    await self._chains.import_state(chains)
                    self.registry.load(services)  # the clock's offset among them
                    await self._chains.follow_clock()
                finally:
                    with self.gate.own_requests_admitted():
                        await self._fleet.start(fresh_nonces=True)
            return ChangeReport(self._monotonic() - started, interrupted, ())

    async def capture(self) -> tuple[dict[str, dict[str, Any]], dict[int, str]]:
        """The current state (for the state directory at stop): the history database's rows
        are not in it, the directory holds that file."""
        async with self._lock, self.gate.closed():
            return self.registry.dump(without_file_backed=True), await self._chains.export()
