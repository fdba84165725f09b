"""Wire shapes of the webhook registry (/v1/webhooks, spec 1-rfq-v2 "Webhook endpoint") and of
the simulator's webhook controls (/_sim/webhooks/*)."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BeforeValidator, ConfigDict, Field, RootModel, field_validator

from simulator.api.http.fields import Timestamp
from simulator.api.http.schemas import ApiModel, SnakeApiModel

WebhookEventType = Literal[
    "rfq.filled",
    "rfq.failed",
    "rfq.expired",
    "swap.filled",
    "limit_order.filled",
    "limit_order.expired",
    "limit_order.cancelled",
]
MAX_URL_LENGTH = 2048
_PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})"
# The URL shapes the registry accepts, declared in the document and enforced by the same field:
# a scheme, `://`, a host of letters, digits, dots and hyphens, an optional
# port 0..65535, then an optional path, query or fragment of printable ASCII (no spaces, no
# control characters). Any scheme matches, so a plain http:// URL is still answered with its own
# reason (https_required). No userinfo, no IP-literal hosts: a receiver is named by a DNS name
# or an IPv4 address.
WEBHOOK_URL_PATTERN = rf"^[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9.-]+(:{_PORT})?([/?#][!-~]*)?$"
_DNS_NAME = re.compile(
    r"^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


# -- /v1/webhooks -------------------------------------------------------------------------


class WebhookCreate(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: str = Field(
        min_length=1,
        max_length=MAX_URL_LENGTH,
        pattern=WEBHOOK_URL_PATTERN,
        description="Absolute https URL the events are POSTed to",
    )
    event_types: list[WebhookEventType] = Field(
        min_length=1, max_length=32, description="Event types to receive; duplicates are dropped"
    )

    @field_validator("url")
    @classmethod
    def _absolute_url(cls, value: str) -> str:
        # After the pattern, a second line of defence: the registry parses the URL with urlsplit
        # and must never be handed one it cannot parse.
        if any(ch.isspace() or ord(ch) < 0x20 for ch in value):
            raise ValueError("must not contain whitespace or control characters")
        try:
            parts = urlsplit(value)
            host, _ = parts.hostname, parts.port
        except ValueError as exc:
            raise ValueError(f"not a URL: {exc}") from exc
        if not parts.scheme or not host:
            raise ValueError("must be an absolute URL with a scheme and a host")
        return value

    @field_validator("event_types")
    @classmethod
    def _dedupe(cls, value: list[WebhookEventType]) -> list[WebhookEventType]:
        return list(dict.fromkeys(value))


class WebhookEndpoint(ApiModel):
    id: str = Field(validation_alias="endpoint_id", description="whe_…")
    url: str
    event_types: list[str]
    status: Literal["active"]


class WebhookEndpointCreated(WebhookEndpoint):
    signing_secret: str = Field(
        description="whsec_…: the HMAC-SHA256 key (UTF-8 bytes of the whole string); "
        "returned only here"
    )


class WebhookEndpointList(RootModel[list[WebhookEndpoint]]):
    """The caller's partner's endpoints, without signing secrets."""


class WebhookDeleted(ApiModel):
    id: str
    deleted: Literal[True]


# -- /_sim/webhooks -----------------------------------------------------------------------

DeliveryStatusName = Literal["pending", "delivered", "failed", "cancelled"]


class DeliveryQuery(SnakeApiModel):
    endpoint_id: str | None = Field(default=None, max_length=64)
    event_id: str | None = Field(default=None, max_length=128)
    status: DeliveryStatusName | None = None
    limit: int = Field(default=1000, ge=1, le=10_000, description="The most recent N matches")


# Validated from the Delivery and Attempt of services/webhooks/model.py.
class DeliveryAttemptView(SnakeApiModel):
    attempt: int = Field(
        validation_alias="number", description="1, 2, … in the order attempts started"
    )
    started_at: Timestamp = Field(description="Simulator time the request was sent (or dropped)")
    latency_ms: float | None = Field(description="Until the response; null when nothing was sent")
    response_status: int | None
    error: str | None = Field(description="timeout, connection_error: …, dropped_by_fault")
    outcome: Literal["succeeded", "failed", "dropped"]
    manual: bool = Field(description="Made by /_sim/webhooks/deliveries/{id}/redeliver")
    duplicate: bool = Field(description="Second copy sent by the duplicate fault")


def _parsed(body: object) -> object:
    return json.loads(body) if isinstance(body, bytes) else body


class DeliveryView(SnakeApiModel):
    id: str = Field(validation_alias="delivery_id", description="whd_…")
    endpoint_id: str
    partner_id: str
    event_id: str
    event_type: str
    status: DeliveryStatusName
    created_at: Timestamp
    next_attempt_at: Timestamp | None = Field(description="Next scheduled attempt (simulator time)")
    attempts: list[DeliveryAttemptView]
    event: Annotated[Any, BeforeValidator(_parsed)] = Field(
        validation_alias="body", description="The event body every attempt sends (JSON)"
    )


class DeliveryList(ApiModel):
    deliveries: list[DeliveryView]


class EndpointView(SnakeApiModel):
    id: str = Field(description="whe_…")
    partner_id: str
    url: str
    event_types: list[str]
    status: str
    created_at: str


class EndpointList(ApiModel):
    endpoints: list[EndpointView] = Field(
        description="Every partner's endpoints, oldest first; signing secrets are never shown"
    )


class WebhookFaultState(SnakeApiModel):
    duplicate: bool = Field(description="Every attempt is sent twice")
    delay_ms: int = Field(description="Each attempt is held this long before it is sent")
    drop_first: int = Field(description="The first N attempts of each delivery fail unsent")


class WebhookFaultUpdate(SnakeApiModel):
    duplicate: bool | None = None
    delay_ms: int | None = Field(default=None, ge=0, le=60_000)
    drop_first: int | None = Field(default=None, ge=0, le=100)


class CaCertificate(SnakeApiModel):
    ca_pem: str = Field(description="The simulator's local CA certificate (PEM)")


class CertificateRequest(ApiModel):
    hostnames: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "localhost"],
        min_length=1,
        max_length=16,
        description="DNS names and IP addresses the server certificate covers",
    )

    @field_validator("hostnames")
    @classmethod
    def _hostnames(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_address(value)
                continue
            except ValueError:
                pass
            if len(value) > 253 or not _DNS_NAME.match(value):
                raise ValueError(f"{value!r} is neither an IP address nor a DNS name")
        return values


class IssuedCertificate(SnakeApiModel):
    cert_pem: str = Field(description="Server certificate chain (PEM), signed by the local CA")
    key_pem: str = Field(description="Its private key (PEM)")
    ca_pem: str = Field(description="The local CA certificate (PEM)")
