"""Inbound status webhooks from the provider.

`POST /_provider/{provider}/webhooks` carries `{id: evt_..., type: "transfer.updated", created,
data: {transfer}}`, signed `X-Provider-Signature: t=<unix>,v1=<hex>` with HMAC-SHA256 of
"<t>.<raw body>" under the webhook secret. The signature is checked over the raw bytes in constant
time (401 otherwise); event ids are deduplicated; the transfer is applied forward only through the
tracker, so a late or duplicate webhook can never move a transfer back.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from simulator.errors import InvalidRequest, NotFound, Unauthorized
from simulator.services.ramp.ports import ProviderTransfer
from simulator.services.ramp.store import TransferStore
from simulator.services.ramp.tracking import TransferTracker
from simulator.services.shared.state import StateSchema

log = logging.getLogger("rfqsim.ramp.webhooks")

SIGNATURE_HEADER = "X-Provider-Signature"
EVENT_TYPE = "transfer.updated"
REMEMBERED_EVENTS = 100_000  # event ids kept for deduplication, per provider

Outcome = Literal["applied", "unchanged", "ignored", "duplicate", "unknown_transfer", "other_type"]


@dataclass(frozen=True)
class WebhookReceipt:
    event_id: str
    outcome: Outcome


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The header value the provider sends (also used by tests to forge a correct one)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def signature_valid(secret: str, header: str | None, body: bytes) -> bool:
    """Stripe-style: `t=<unix>` plus one or more `v1=<hex>`; any v1 matching is enough."""
    if not header:
        return False
    timestamp: str | None = None
    candidates: list[str] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            timestamp = value
        elif name == "v1":
            candidates.append(value)
    if timestamp is None or not timestamp.isascii() or not timestamp.isdigit() or not candidates:
        return False
    expected = hmac.new(
        secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    matched = False
    for candidate in candidates:
        # compare_digest on str needs ASCII; a non-ASCII candidate can never match anyway.
        if candidate.isascii() and hmac.compare_digest(expected, candidate):
            matched = True
    return matched


def _invalid(message: str) -> InvalidRequest:
    return InvalidRequest(message, details={"reason": "invalid_webhook"})


class ProviderWebhooks:
    def __init__(
        self,
        store: TransferStore,
        tracker: TransferTracker,
        secrets: Mapping[str, str],
        parse_transfer: Callable[[dict[str, Any]], ProviderTransfer],
    ) -> None:
        self._store = store
        self._tracker = tracker
        self._secrets = secrets  # provider id -> webhook secret
        self._parse_transfer = parse_transfer  # the provider adapter's transfer parser
        self._seen: dict[str, OrderedDict[str, None]] = {}  # provider -> event ids, oldest first

    def receive(self, provider_id: str, body: bytes, signature: str | None) -> WebhookReceipt:
        secret = self._secrets.get(provider_id)
        if secret is None:
            raise NotFound(f"Unknown provider {provider_id!r}")
        if not signature_valid(secret, signature, body):
            raise Unauthorized(
                f"{SIGNATURE_HEADER} does not verify", details={"reason": "invalid_signature"}
            )
        try:
            envelope = json.loads(body)
        except ValueError as exc:
            raise _invalid("The webhook body is not JSON") from exc
        if not isinstance(envelope, dict) or not isinstance(envelope.get("id"), str):
            raise _invalid("The webhook body has no event id")
        event_id: str = envelope["id"]
        seen = self._seen.setdefault(provider_id, OrderedDict())
        if event_id in seen:
            log.info("duplicate provider event %s ignored", event_id)
            return WebhookReceipt(event_id, "duplicate")
        if envelope.get("type") != EVENT_TYPE:
            self._remember(seen, event_id)
            return WebhookReceipt(event_id, "other_type")
        data = envelope.get("data")
        raw_transfer = data.get("transfer") if isinstance(data, dict) else None
        if not isinstance(raw_transfer, dict):
            raise _invalid("The webhook carries no data.transfer")
        try:
            seen_transfer = self._parse_transfer(raw_transfer)
        except Exception as exc:  # whatever the parser trips on, a bad body is 400, never 500
            raise _invalid(f"data.transfer is malformed: {type(exc).__name__}") from exc
        self._remember(seen, event_id)
        record = self._store.by_provider_transfer(provider_id, seen_transfer.id)
        if record is None:
            log.info("event %s for an unknown transfer %s", event_id, seen_transfer.id)
            return WebhookReceipt(event_id, "unknown_transfer")
        result = self._tracker.apply(record, seen_transfer, f"webhook {event_id}")
        if not result.applied:
            return WebhookReceipt(event_id, "ignored")
        return WebhookReceipt(event_id, "applied" if result.changed else "unchanged")

    @staticmethod
    def _remember(seen: OrderedDict[str, None], event_id: str) -> None:
        seen[event_id] = None
        while len(seen) > REMEMBERED_EVENTS:
            seen.popitem(last=False)


class ProviderWebhooksSaved(StateSchema):
    """What reset and snapshots put back of the inbound provider webhooks: the event ids seen,
    per provider, oldest first."""

    seen: dict[str, OrderedDict[str, None]] = Field(validation_alias="_seen")
