"""A provider webhook event for a transfer, signed as the provider signs it: for the ramp
tracking and saved-state tests."""

from __future__ import annotations

import json

from simulator.services.ramp.ports import ProviderTransfer
from tests.unit.services.ramp_harness import Ramp


def event(ramp: Ramp, transfer: ProviderTransfer, event_id: str) -> bytes:
    """A webhook body; the harness's parser returns `transfer` for it."""
    ramp.parsed[transfer.id + event_id] = transfer
    return json.dumps(
        {
            "id": event_id,
            "type": "transfer.updated",
            "created": "2030-01-01T00:00:00Z",
            "data": {"transfer": {"id": transfer.id + event_id}},
        }
    ).encode()
