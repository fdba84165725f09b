"""An RFQ record as the history archive keeps it (ports.py `RfqArchive`, store.py): the record
and the Fill logs seen for it, in one schema, so what is written is read back whole."""

from __future__ import annotations

from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import StateSchema


class ArchivedRfq(StateSchema):
    record: StoredRfq
    fills: dict[bytes, Fill]


def copy_of(record: StoredRfq, fills: dict[bytes, Fill]) -> bytes:
    """The record and its fills as one instance of a venue keeps them for another to take over
    (services/shared/owners.py `keep`); `taken_over` reads it back."""
    return ArchivedRfq.model_construct(record=record, fills=fills).model_dump_json().encode()


def taken_over(copy: bytes) -> ArchivedRfq:
    return ArchivedRfq.model_validate_json(copy)
