"""build_access: the access area (keys, proofs of control, limiter, fault switches)."""

from __future__ import annotations

from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.access.area import AccessArea, LimitsSaved
from simulator.services.access.keys import KeyService, KeysSaved
from simulator.services.access.limits import FixedWindowLimiter, LimiterSaved
from simulator.services.access.ports import SignatureChecker
from simulator.services.access.proofs import ProofLedger, ProofService, ProofSettings
from simulator.services.shared.faults import Faults, FaultsSaved
from simulator.services.shared.state import SavedAttributes, StateParticipant
from simulator.settings import Settings


def build_access(
    settings: Settings,
    clock: Clock,
    random: RandomSource,
    *,
    signatures: SignatureChecker,
    proofs: ProofLedger | None = None,
) -> AccessArea:
    """`signatures` checks a smart account's signature on chain (ERC-1271/6492); `proofs`
    keeps bound nonces and grants (in memory unless given: the shared engine's)."""
    return AccessArea(
        keys=KeyService(clock, random.fork("keys")),
        proofs=ProofService(
            clock,
            signatures,
            ProofSettings(
                window_s=settings.proof.window_s,
                grant_s=settings.proof.grant_s,
                wall_clock_when_moved=settings.proof.wall_clock_when_moved,
            ),
            proofs,
        ),
        limiter=FixedWindowLimiter(clock),
        faults=Faults(),
        limits=settings.limits,
    )


def access_state(area: AccessArea) -> list[StateParticipant]:
    return [
        SavedAttributes("access.keys", area.keys, KeysSaved),
        SavedAttributes("access.limiter", area.limiter, LimiterSaved),
        area.proofs.state("access.proofs"),
        SavedAttributes("access.faults", area.faults, FaultsSaved),
        SavedAttributes("access.limits", area, LimitsSaved),
    ]
