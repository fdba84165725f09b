"""swap.filled (spec 3 "Events"): fires when a tracked swap settles on chain; built from the
record with the spec's body field for field and published on the area's event log."""

from __future__ import annotations

from simulator.clock import isoformat_unix
from simulator.services.shared.events import Event
from simulator.services.swaps.model import SwapRecord

SWAP_EVENT_TYPES = ("swap.filled",)


def swap_filled_event(record: SwapRecord, created: float) -> Event:
    event_id = f"swap.filled:{record.swap_id}"
    body = {
        "id": event_id,
        "type": "swap.filled",
        "created": isoformat_unix(created),
        "data": {
            "swap": {
                "id": record.swap_id,
                "chainId": record.chain_id,
                "txHash": record.tx_hash,
                "soldAmount": str(record.settled_sold),
                "proceeds": str(record.settled_proceeds),
                "effectiveRateRay": str(record.effective_rate_ray),
                "ordersFilled": len(record.fills),
                "filledAt": isoformat_unix(record.filled_at),
            }
        },
    }
    return Event(
        id=event_id, type="swap.filled", created=created, partner_id=record.partner_id, body=body
    )
