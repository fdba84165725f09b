"""The v1 area as handlers see it, behind the `V1` app key (built by runtime/v1.py)."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.shared.health import StatusService
from simulator.services.shared.venue import VenueDirectory


@dataclass
class V1Area:
    status: StatusService
    venue: VenueDirectory  # corridors and the chain check read it
