"""Webhook delivery at run time: builds the webhook services on their ports (the HTTPS sender
and the local CA in the app), and runs the delivery worker as one cleanup context that cancels
and awaits it (and closes the sender's session) on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from aiohttp import web

from simulator.adapters.webhooks.local_ca import LocalCa, resolve_state_dir
from simulator.adapters.webhooks.sender import AiohttpWebhookSender
from simulator.api.http.appkeys import WEBHOOKS
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.shared.state import SavedAttributes, StateParticipant
from simulator.services.webhooks.outbox import DeliveryFaultsSaved, OutboxSaved
from simulator.services.webhooks.ports import (
    CertificateAuthority,
    DeliveryArchive,
    WebhookTransport,
)
from simulator.services.webhooks.registry import RegistrySaved
from simulator.services.webhooks.service import Webhooks
from simulator.settings import WebhookSettings


@dataclass
class WebhookAdapters:
    ca: LocalCa  # signs receivers' certificates; trusted by the sender
    sender: AiohttpWebhookSender  # the one HTTPS client of every delivery


WEBHOOK_ADAPTERS: web.AppKey[WebhookAdapters] = web.AppKey("webhook_adapters")


def webhook_adapters(settings: WebhookSettings) -> WebhookAdapters:
    """The HTTPS sender and the local CA whose certificates it trusts."""
    ca = LocalCa(resolve_state_dir(settings.state_dir))
    sender = AiohttpWebhookSender(
        ca,
        max_connections=settings.max_concurrent,
        max_per_host=settings.max_concurrent_per_endpoint,
    )
    return WebhookAdapters(ca=ca, sender=sender)


def build_webhooks(
    settings: WebhookSettings,
    clock: Clock,
    random: RandomSource,
    *,
    transport: WebhookTransport,
    certificates: CertificateAuthority,
    archive: DeliveryArchive,
) -> Webhooks:
    """The webhooks area on its ports: what posts a delivery, what issues receivers'
    certificates (`webhook_adapters` in the app, fakes in unit tests) and where finished
    deliveries go (the history file's adapters/store/delivery_archive.py in the app)."""
    return Webhooks(clock, random, settings, transport, certificates, archive)


def webhooks_state(webhooks: Webhooks) -> list[StateParticipant]:
    """Endpoints, pending deliveries, sending faults (finished deliveries are rows of the
    history file); after a load the outbox forgets attempts under way and wakes the worker,
    since its next due time may have changed."""
    return [
        SavedAttributes(
            "webhooks.registry",
            webhooks.registry,
            RegistrySaved,
            after_load=webhooks.registry.reindex,
        ),
        SavedAttributes(
            "webhooks.outbox", webhooks.outbox, OutboxSaved, after_load=webhooks.outbox.restored
        ),
        SavedAttributes("webhooks.faults", webhooks.faults, DeliveryFaultsSaved),
    ]


async def webhooks_context(app: web.Application) -> AsyncIterator[None]:
    worker = asyncio.create_task(app[WEBHOOKS].worker.run(), name="webhook-worker")
    try:
        yield
    finally:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
        await app[WEBHOOK_ADAPTERS].sender.close()
