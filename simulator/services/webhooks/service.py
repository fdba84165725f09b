"""The webhooks area's service, built together: the registry, the outbox, the dispatcher on the
event log, the sending-side faults, the delivery worker (jobs.py) and the local certificate
authority receivers use. No network code and no disk here: the HTTPS POST, the CA and the
archive of finished deliveries are adapters behind ports.py."""

from __future__ import annotations

from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.webhooks.jobs import DeliveryWorker
from simulator.services.webhooks.outbox import DeliveryFaults, DeliveryOutbox, WebhookDispatcher
from simulator.services.webhooks.ports import (
    CertificateAuthority,
    DeliveryArchive,
    WebhookTransport,
)
from simulator.services.webhooks.registry import WebhookEndpointRecord, WebhookRegistry
from simulator.settings import WebhookSettings


class Webhooks:
    """Everything webhooks, for the handlers and the runtime."""

    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        settings: WebhookSettings,
        transport: WebhookTransport,
        certificates: CertificateAuthority,
        archive: DeliveryArchive,
    ) -> None:
        self.settings = settings
        self.certificates = certificates  # /_sim/webhooks/ca and /certificates
        self.registry = WebhookRegistry(
            clock,
            random.fork("endpoints"),
            allow_http=settings.allow_http,
            max_per_partner=settings.max_endpoints_per_partner,
        )
        self.outbox = DeliveryOutbox(settings.retry_schedule_s, archive)
        self.dispatcher = WebhookDispatcher(
            clock, random.fork("deliveries"), self.registry, self.outbox
        )
        self.faults = DeliveryFaults()
        self.worker = DeliveryWorker(
            clock, self.registry, self.outbox, self.faults, transport, settings
        )

    def delete_endpoint(self, partner_id: str, endpoint_id: str) -> WebhookEndpointRecord:
        """The endpoint goes, and so do its pending deliveries (they would have nowhere to go)."""
        endpoint = self.registry.delete(partner_id, endpoint_id)
        self.outbox.cancel_endpoint(endpoint_id)
        return endpoint
