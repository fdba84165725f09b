"""The services of one simulator, built together by the app factory."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.access.keys import KeyService
from simulator.services.access.limits import FixedWindowLimiter
from simulator.services.access.proofs import ProofService
from simulator.services.rfq.slots import OutstandingSlots
from simulator.services.shared.faults import Faults
from simulator.settings import LimitSettings


@dataclass
class Services:
    keys: KeyService
    proofs: ProofService
    limiter: FixedWindowLimiter
    slots: OutstandingSlots
    faults: Faults
    limits: LimitSettings  # replaced whole by /_sim/limits (load tests raise them)
