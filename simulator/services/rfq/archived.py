"""An RFQ record as the history archive keeps it (ports.py `RfqArchive`, store.py): the record
and the Fill logs seen for it, in one schema, so what is written is read back whole."""

from __future__ import annotations

from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import StateSchema


class ArchivedRfq(StateSchema):
    record: StoredRfq
    fills: dict[bytes, Fill]
