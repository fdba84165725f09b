"""The RFQ area as handlers and the wiring see it: its services, built together by runtime/rfq.py
`build_rfq` and reached through the `RFQ` app key."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.rfq.deps import RfqDeps
from simulator.services.rfq.fleet_control import MakerControl
from simulator.services.rfq.ports import RfqStore
from simulator.services.rfq.service import RfqService
from simulator.services.rfq.settlement import Settlement
from simulator.services.rfq.time_control import RfqTimeControl
from simulator.services.shared.events import EventLog


@dataclass
class RfqArea:
    service: RfqService
    settlement: Settlement
    events: EventLog
    maker_control: MakerControl  # /_sim/makers: who is online, the simulated fleet
    store: RfqStore  # every RFQ record (reset and snapshot work on it)
    time_control: RfqTimeControl  # /_sim/rfqs/{id}/...: one RFQ's time moved, nothing else
    # What the service, the auction and settlement share: who is online and their levels, the
    # makers' inventory, taker reservations, outstanding slots, every RFQ's timeline.
    deps: RfqDeps
