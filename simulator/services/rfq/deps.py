"""What the RFQ service and the settlement reconciler depend on, gathered in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from simulator.services.access.proofs import ProofService
from simulator.services.rfq.funds import TakerFunds
from simulator.services.rfq.history import RfqHistory
from simulator.services.rfq.makers import MakerRegistry
from simulator.services.rfq.ports import HoldLedger, SlotLedger
from simulator.services.rfq.pricing import IndicativePricing
from simulator.services.shared.faults import Faults
from simulator.services.shared.owners import RecordOwners, SoleOwner
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import LimitSettings


@dataclass
class RfqDeps:
    venue: VenueDirectory
    proofs: ProofService
    slots: SlotLedger  # outstanding-RFQ slots: in memory, or shared by several instances
    funds: TakerFunds
    inventory: HoldLedger  # maker holds and nonces: in memory, or shared by several instances
    makers: MakerRegistry
    pricing: IndicativePricing
    faults: Faults
    limits: Callable[[], LimitSettings]  # current limits (changeable through /_sim/limits)
    history: RfqHistory  # every RFQ's timeline and the makers' answers (GET /_sim/rfqs)
    # Which instance holds each RFQ: this one alone, or the venue's (several instances)
    owners: RecordOwners = field(default_factory=SoleOwner)

    def inventory_extend(self, rfq_id: str, until: float) -> None:
        """The quote's holds on maker inventory run to the quote's expiresAt."""
        self.inventory.set_until(rfq_id, until)
