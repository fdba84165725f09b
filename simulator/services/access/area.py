"""The access area as handlers and the wiring see it: API keys, proofs of control, the per-key
limiter and the limits in force, plus the fault switches the access middleware reads. Built by
runtime/access.py `build_access`, reached through the `ACCESS` app key."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.access.keys import KeyService
from simulator.services.access.limits import FixedWindowLimiter
from simulator.services.access.proofs import ProofService
from simulator.services.shared.faults import Faults
from simulator.services.shared.state import StateSchema
from simulator.settings import LimitSettings


@dataclass
class AccessArea:
    keys: KeyService
    proofs: ProofService
    limiter: FixedWindowLimiter
    faults: Faults
    limits: LimitSettings  # replaced whole by /_sim/limits (load tests raise them)


class LimitsSaved(StateSchema):
    """The limits in force (/_sim/limits replaces them whole)."""

    limits: LimitSettings
