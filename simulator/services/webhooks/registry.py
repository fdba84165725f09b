"""The webhook registry (spec 1-rfq-v2 "Webhook endpoint", "Events"; 3 "Events"): endpoints
belong to a partner record, name the event types they want, and carry a signing secret that is
returned once, at creation. The registry serves v1 and v2 alike (spec 1 "Versioning" item 3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field

from simulator.clock import Clock
from simulator.errors import InvalidRequest, NotFound
from simulator.randomness import RandomSource, secret_token
from simulator.services.shared.state import StateSchema

# Every event type an endpoint may subscribe to: the RFQ events (spec 1) and the v1 events
# (spec 3). v1 producers do not exist yet; endpoints may still name their types.
WEBHOOK_EVENT_TYPES: tuple[str, ...] = (
    "rfq.filled",
    "rfq.failed",
    "rfq.expired",
    "swap.filled",
    "limit_order.filled",
    "limit_order.expired",
    "limit_order.cancelled",
)

EndpointStatus = Literal["active"]


@dataclass
class WebhookEndpointRecord:
    endpoint_id: str  # whe_…
    partner_id: str  # owner: only events of this partner's RFQs reach it
    url: str  # exactly as registered
    event_types: tuple[str, ...]  # deduplicated, in the order given
    signing_secret: str = field(repr=False)  # whsec_…: the HMAC key (UTF-8), shown once
    created_at: float  # simulator time
    status: EndpointStatus = "active"

    def wants(self, event_type: str) -> bool:
        return event_type in self.event_types


def check_endpoint_url(url: str, *, allow_http: bool) -> None:
    """Spec: endpoint URLs must be https. Plain http only with the developer flag."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # raises ValueError for a port out of range
    except ValueError:
        host = None
    if not host or not parts.scheme:
        raise InvalidRequest(
            "url must be an absolute URL with a host", details={"reason": "invalid_url"}
        )
    scheme = parts.scheme.lower()
    if scheme == "https" or (scheme == "http" and allow_http):
        return
    # The real service says only "must be https"; the simulator adds how to get there locally.
    hint = (
        "; to receive on this machine, run `rfqsim webhooks listen --api-key KEY "
        "--forward-to http://127.0.0.1:PORT/...` (an https receiver the simulator trusts, "
        "forwarding to your http handler), or start the simulator with --allow-http-webhooks"
        if scheme == "http"
        else ""
    )
    raise InvalidRequest(
        f"Webhook endpoint URLs must be https{hint}",
        details={"reason": "https_required", "scheme": scheme},
    )


def clean_event_types(event_types: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Duplicates dropped (first one kept); unknown or no types are a 400 naming eventTypes."""
    unknown = [t for t in event_types if t not in WEBHOOK_EVENT_TYPES]
    if unknown or not event_types:
        raise InvalidRequest.for_field(
            "eventTypes",
            f"unknown event types {unknown}" if unknown else "empty",
            "enum" if unknown else "too_short",
            summary="eventTypes must name at least one known event type",
        )
    return tuple(dict.fromkeys(event_types))


class WebhookRegistry:
    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        *,
        allow_http: bool = False,
        max_per_partner: int = 16,
    ) -> None:
        self._clock = clock
        self._random = random  # endpoint ids only; signing secrets come from the OS CSPRNG
        self.allow_http = allow_http  # developer flag: accept http:// URLs
        self.max_per_partner = max_per_partner
        self._endpoints: dict[str, WebhookEndpointRecord] = {}  # by endpoint id, in creation order
        self._by_partner: dict[str, list[str]] = {}  # partner id -> its endpoint ids

    def create(
        self, partner_id: str, url: str, event_types: tuple[str, ...] | list[str]
    ) -> WebhookEndpointRecord:
        check_endpoint_url(url, allow_http=self.allow_http)
        types = clean_event_types(event_types)
        owned = self._by_partner.setdefault(partner_id, [])
        if len(owned) >= self.max_per_partner:
            raise InvalidRequest(
                f"A partner may register at most {self.max_per_partner} webhook endpoints",
                details={"reason": "endpoint_limit", "limit": self.max_per_partner},
            )
        endpoint = WebhookEndpointRecord(
            endpoint_id=self._random.new_id("whe", 12),
            partner_id=partner_id,
            url=url,
            event_types=types,
            signing_secret=secret_token("whsec_", 32),
            created_at=self._clock.time(),
        )
        self._endpoints[endpoint.endpoint_id] = endpoint
        owned.append(endpoint.endpoint_id)
        return endpoint

    def reindex(self) -> None:
        """Each partner's endpoints from the endpoints themselves, in creation order (after a
        load: the endpoints may have been made at several instances at once)."""
        self._by_partner = {}
        for endpoint in sorted(self._endpoints.values(), key=lambda e: e.created_at):
            self._by_partner.setdefault(endpoint.partner_id, []).append(endpoint.endpoint_id)

    def all(self) -> list[WebhookEndpointRecord]:
        """Every endpoint of every partner, oldest first."""
        return list(self._endpoints.values())

    def owned_by(self, partner_id: str) -> list[WebhookEndpointRecord]:
        return [self._endpoints[i] for i in self._by_partner.get(partner_id, [])]

    def get(self, endpoint_id: str) -> WebhookEndpointRecord | None:
        return self._endpoints.get(endpoint_id)

    def delete(self, partner_id: str, endpoint_id: str) -> WebhookEndpointRecord:
        """404 for an unknown id and for another partner's endpoint alike: ids of other
        partners are not confirmed."""
        endpoint = self._endpoints.get(endpoint_id)
        if endpoint is None or endpoint.partner_id != partner_id:
            raise NotFound("No such webhook endpoint")
        del self._endpoints[endpoint_id]
        self._by_partner[partner_id].remove(endpoint_id)
        return endpoint

    def subscribed(self, partner_id: str | None, event_type: str) -> list[WebhookEndpointRecord]:
        """The endpoints an event of this partner and type goes to."""
        if partner_id is None:
            return []
        endpoints = (self._endpoints[i] for i in self._by_partner.get(partner_id, []))
        return [e for e in endpoints if e.wants(event_type)]


class RegistrySaved(StateSchema):
    """What reset and snapshots put back of the webhook registry: every endpoint, by partner."""

    endpoints: dict[str, WebhookEndpointRecord] = Field(validation_alias="_endpoints")
    by_partner: dict[str, list[str]] = Field(validation_alias="_by_partner")
