"""Receiving the service's webhooks as the conformance tests do: :class:`RfqEventReceiver`, the
spec's safe receiver for RFQ events (dedupes on the event id, keys on ``rfq.id``, lets
``filled`` overwrite ``failed``/``expired`` and never the reverse), and
:func:`fetch_certificate`, a server certificate from the simulator's local CA
(``POST /_sim/webhooks/certificates``), which the simulator's webhook sender trusts. The https
receivers and signature checks themselves are in rfqkit (webhook_receiver, webhook_signatures)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.wire.client import request
from rfqkit.webhook_receiver import LOOPBACK_HOSTNAMES
from rfqkit.webhook_signatures import (
    DEFAULT_TOLERANCE_S,
    SIGNATURE_HEADER,
    InvalidSignature,
    signature_problem,
)

# Where the suite registers endpoints that must never be delivered to: a host under the reserved
# top-level domain .invalid (RFC 2606), which no name lookup resolves. A service accepts it (an
# https URL); should a shared partner's event fire while it is registered, the delivery fails
# on the spot, and no request leaves this machine for someone else's server.
NOWHERE = "https://rfqsim-conformance.invalid"


@dataclass
class RfqView:
    """What a receiver believes about one RFQ after the events it applied."""

    rfq_id: str
    status: str  # filled | failed | expired (the event type without "rfq.")
    event_id: str  # the event that set this view
    late: bool  # a correction (rfq.filled with late true)
    supersedes: str | None  # rfq.expired / rfq.failed on a correction
    rfq: dict[str, Any]  # data.rfq of that event


@dataclass
class RfqEventReceiver:
    """Spec 1-rfq-v2 "Corrections": key on rfq.id, filled overwrites failed/expired, never the
    reverse; delivery is at-least-once, so events are deduplicated on their id."""

    rfqs: dict[str, RfqView] = field(default_factory=dict)  # by rfq id
    seen: set[str] = field(default_factory=set)  # event ids already handled

    def handle(self, event: Mapping[str, Any]) -> bool:
        """Apply one event body; False when its id was seen before (a duplicate)."""
        event_id = str(event["id"])
        if event_id in self.seen:
            return False
        self.seen.add(event_id)
        event_type = str(event.get("type", ""))
        if not event_type.startswith("rfq."):
            return True  # other event families are not RFQ state
        rfq = dict(event["data"]["rfq"])
        status = event_type.removeprefix("rfq.")
        current = self.rfqs.get(str(rfq["id"]))
        if current is not None and current.status == "filled" and status != "filled":
            return True  # a stale failed/expired never overwrites a fill
        self.rfqs[str(rfq["id"])] = RfqView(
            rfq_id=str(rfq["id"]),
            status=status,
            event_id=event_id,
            late=bool(rfq.get("late")),
            supersedes=rfq.get("supersedes"),
            rfq=rfq,
        )
        return True

    def handle_delivery(
        self,
        secret: str,
        headers: Mapping[str, str],
        raw_body: bytes,
        *,
        tolerance: int = DEFAULT_TOLERANCE_S,
        now: float | None = None,
    ) -> bool:
        """Verify, then apply; raises :class:`InvalidSignature` for a bad delivery."""
        lowered = {k.lower(): v for k, v in headers.items()}
        problem = signature_problem(
            secret, lowered.get(SIGNATURE_HEADER.lower()), raw_body, tolerance, now
        )
        if problem is not None:
            raise InvalidSignature(problem)
        return self.handle(json.loads(raw_body))


def fetch_certificate(
    base_url: str, hostnames: Iterable[str] = LOOPBACK_HOSTNAMES, timeout: float = 30.0
) -> tuple[str, str, str]:
    """``(cert_pem, key_pem, ca_pem)`` of a server certificate from the simulator's local CA."""
    resp = request(
        "POST",
        base_url.rstrip("/") + "/_sim/webhooks/certificates",
        json={"hostnames": list(hostnames)},
        timeout=timeout,
    )
    if resp.status != 200 or not isinstance(resp.body, dict):
        raise RuntimeError(f"{resp.describe()}: {resp.raw[:300]!r}")
    data = resp.body["data"]
    return str(data["cert_pem"]), str(data["key_pem"]), str(data["ca_pem"])
