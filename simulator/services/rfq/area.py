"""The RFQ venue's services, built together by the app factory."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.rfq.events import EventLog
from simulator.services.rfq.makers import MakerRegistry
from simulator.services.rfq.service import RfqService
from simulator.services.rfq.settlement import Settlement


@dataclass
class RfqRuntime:
    service: RfqService
    settlement: Settlement
    makers: MakerRegistry
    events: EventLog
