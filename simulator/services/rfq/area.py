"""The RFQ area as handlers and the wiring see it: its services, built together by runtime/rfq.py
`build_rfq` and reached through the `RFQ` app key."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.rfq.fleet_control import MakerControl
from simulator.services.rfq.funds import TakerFunds
from simulator.services.rfq.history import RfqHistory
from simulator.services.rfq.inventory import MakerInventory
from simulator.services.rfq.makers import MakerRegistry
from simulator.services.rfq.ports import RfqStore
from simulator.services.rfq.pricing import IndicativePricing
from simulator.services.rfq.service import RfqService
from simulator.services.rfq.settlement import Settlement
from simulator.services.rfq.slots import OutstandingSlots
from simulator.services.rfq.time_control import RfqTimeControl
from simulator.services.shared.events import EventLog


@dataclass
class RfqArea:
    service: RfqService
    settlement: Settlement
    makers: MakerRegistry
    events: EventLog
    maker_control: MakerControl  # /_sim/makers: who is online, the simulated fleet
    store: RfqStore  # every RFQ record (reset and snapshot work on it)
    pricing: IndicativePricing  # the makers' levels priced (preview, ladder; the feed's RFQ prices)
    inventory: MakerInventory  # maker inventory live quotes hold (the feed's reserved sides)
    funds: TakerFunds  # taker reservations (reset and snapshot put them back)
    slots: OutstandingSlots  # outstanding-RFQ slots per caller (likewise)
    history: RfqHistory  # every RFQ's timeline, the makers' answers (GET /_sim/rfqs, console)
    time_control: RfqTimeControl  # /_sim/rfqs/{id}/...: one RFQ's time moved, nothing else
