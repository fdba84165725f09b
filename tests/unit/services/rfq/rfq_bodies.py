"""The public RFQ body of a harness request (its record as the service returns it), for the
settlement and time-control tests."""

from __future__ import annotations

from typing import Any

from tests.unit.services.rfq.harness import RfqHarness


def rfq_body(rfq: RfqHarness, index: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = rfq.events.events[index].body["data"]["rfq"]
    return body
