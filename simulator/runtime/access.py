"""build_access: the access area (keys, proofs of control, limiter, fault switches)."""

from __future__ import annotations

from rfqkit.chain import AnvilChain
from simulator.adapters.access.signatures import ChainSignatureChecker
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.access.area import AccessArea
from simulator.services.access.keys import KeyService
from simulator.services.access.limits import FixedWindowLimiter
from simulator.services.access.proofs import ProofService, ProofSettings
from simulator.services.shared.faults import Faults
from simulator.services.shared.state import AttributeState, StateParticipant
from simulator.settings import Settings


def build_access(
    settings: Settings, clock: Clock, random: RandomSource, chains: dict[int, AnvilChain]
) -> AccessArea:
    return AccessArea(
        keys=KeyService(clock, random.fork("keys")),
        proofs=ProofService(
            clock,
            ChainSignatureChecker(chains),
            ProofSettings(
                window_s=settings.proof.window_s,
                grant_s=settings.proof.grant_s,
                wall_clock_when_moved=settings.proof.wall_clock_when_moved,
            ),
        ),
        limiter=FixedWindowLimiter(clock),
        faults=Faults(),
        limits=settings.limits,
    )


def access_state(area: AccessArea) -> list[StateParticipant]:
    return [
        AttributeState.of("access.keys", area.keys),
        AttributeState.of("access.limiter", area.limiter),
        AttributeState.of("access.proofs", area.proofs),
        AttributeState.of("access.faults", area.faults),
        AttributeState("access.limits", area, ("limits",)),
    ]
