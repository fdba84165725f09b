"""The services of one simulator, built together by the app factory."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.faults import Faults
from simulator.services.keys import KeyService
from simulator.services.proofs import ProofService
from simulator.services.ratelimit import FixedWindowLimiter
from simulator.services.slots import OutstandingSlots
from simulator.settings import LimitSettings


@dataclass
class Services:
    keys: KeyService
    proofs: ProofService
    limiter: FixedWindowLimiter
    slots: OutstandingSlots
    faults: Faults
    limits: LimitSettings  # replaced whole by /_sim/limits (load tests raise them)
