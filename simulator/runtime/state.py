"""The state control's wiring: the participants of the parts every area shares (clock, random
streams, idempotency records), the control itself with its adapters, and the one call that takes
the baseline once start-up is complete. Each area's own participants are listed in its
`runtime/<area>.py` (`<area>_state`) and registered by the app factory."""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

from aiohttp import web

from rfqkit.chain import AnvilChain
from rfqkit.random_state import RandomStream
from simulator.adapters.chain.snapshots import AnvilChainStates
from simulator.adapters.sim.state_dir import SavedState, write_state_dir
from simulator.api.http.appkeys import CHAINS, CLOCK, DURABLE, SETTINGS, STATE
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.makers import FLEET, fresh_stream
from simulator.services.shared.idempotency import IdempotencyLedger
from simulator.services.shared.state import (
    StateParticipant,
    StateRegistry,
    StateSchema,
    read_schema,
)
from simulator.services.sim.gate import RequestGate
from simulator.services.sim.ports import ChainStates, FleetRestart
from simulator.services.sim.state import StateControl

log = logging.getLogger("rfqsim.state")

# The state directory's content, read and checked before start-up (cli.py); the chains load
# theirs before deploying, the services theirs once the API listens.
SAVED_STATE: web.AppKey[SavedState] = web.AppKey("saved_state")

# What a reset may keep (the body's `keep`): word -> participant name prefixes.
KEEPABLE: dict[str, tuple[str, ...]] = {
    "webhooks": ("webhooks.registry",),
    "keys": ("access.keys",),
    "limits": ("access.limits",),
    "faults": ("access.faults", "webhooks.faults"),
    "clock": ("clock",),
}


class RandomStreamsSaved(StateSchema):
    """Every stream of the one random source, by its fork path."""

    streams: dict[str, RandomStream]


class RandomStreams:
    """Every stream of the one random source, so the numbers drawn after a reset are those
    drawn after start-up."""

    name = "random"

    def __init__(self, source: RandomSource) -> None:
        self._source = source

    def dump(self) -> dict[str, Any]:
        return RandomStreamsSaved(streams=self._source.streams()).model_dump(mode="json")

    def check(self, state: object) -> RandomStreamsSaved:
        return read_schema(self.name, RandomStreamsSaved, state)

    def load(self, state: dict[str, Any]) -> None:
        streams: dict[str, random.Random] = self._source.streams()
        for path, saved in self.check(state).streams.items():
            stream = streams.get(path)
            if stream is not None:  # a stream forked after the dump keeps going as it is
                stream.setstate(saved.getstate())


class ClockSaved(StateSchema):
    """How far /_sim/clock/advance has moved the service clock."""

    offset_seconds: float


class ClockOffset:
    name = "clock"

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def dump(self) -> dict[str, Any]:
        return ClockSaved(offset_seconds=self._clock.offset_seconds).model_dump(mode="json")

    def check(self, state: object) -> ClockSaved:
        return read_schema(self.name, ClockSaved, state)

    def load(self, state: dict[str, Any]) -> None:
        self._clock.restore_offset(self.check(state).offset_seconds)


def shared_state(
    clock: Clock, source: RandomSource, idempotency: IdempotencyLedger
) -> list[StateParticipant]:
    return [
        ClockOffset(clock),
        RandomStreams(source),
        idempotency.state("idempotency"),
    ]


def build_state_control(
    registry: StateRegistry,
    clock: Clock,
    *,
    chains: ChainStates,
    fleet: FleetRestart,
    drain_s: float,
) -> StateControl:
    """Reset, snapshots and restore over every participant of `registry`, on the chains'
    own snapshots (`chains`) and the fleet's restart (`fleet`)."""
    return StateControl(
        registry,
        RequestGate(drain_s=drain_s),
        chains,
        fleet,
        time=clock.time,
        monotonic=clock.monotonic,
        keepable=KEEPABLE,
    )


async def resume_saved_state(app: web.Application, saved: SavedState) -> None:
    """Start-up from a state directory: the chains loaded theirs before deploying; now the
    services (their clock offset among them), the chains' block time after it, and the makers
    on a random stream of their own (the chains remember the nonces they signed before)."""
    control = app[STATE]
    control.registry.load(saved.services)
    chains: dict[int, AnvilChain] = app[CHAINS]
    await AnvilChainStates(chains, lambda: app[CLOCK].offset_seconds).follow_clock()
    fresh_stream(app[FLEET])
    log.info("state loaded from %s (saved %s)", saved.path, saved.saved_at)


def resume_durable(app: web.Application) -> None:
    """Start-up with a state directory: the keys, limits and webhook endpoints the history file
    holds, written as they changed, over those of the last stop (services/sim/durable.py);
    a simulator that was killed comes back with them."""
    if names := app[DURABLE].resume():
        log.info("configuration loaded from the history file: %s", ", ".join(names))


async def save_state(app: web.Application, directory: Path) -> None:
    """On stop: everything, written atomically; a failure is logged, never blocks the stop."""
    try:
        services, chains = await app[STATE].capture()
        path = write_state_dir(directory, seed=app[SETTINGS].seed, services=services, chains=chains)
    except Exception:
        log.exception("could not save the state to %s", directory)
        return
    log.info("state saved to %s", path)
