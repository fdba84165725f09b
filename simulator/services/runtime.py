"""The RFQ venue's services, built together by the app factory."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.events import EventLog
from simulator.services.makers import MakerRegistry
from simulator.services.rfq import RfqService
from simulator.services.settlement import Settlement


@dataclass
class RfqRuntime:
    service: RfqService
    settlement: Settlement
    makers: MakerRegistry
    events: EventLog
