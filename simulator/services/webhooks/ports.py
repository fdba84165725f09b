"""Ports of the webhooks area: the HTTPS transport deliveries go through, the local
certificate authority receivers get certificates from, and the archive finished deliveries go
to. Adapters (adapters/webhooks/, adapters/store/delivery_archive.py) implement them; unit tests
use fakes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from simulator.services.webhooks.model import Delivery, DeliveryFilter


@dataclass(frozen=True)
class SendResult:
    status: int | None  # the receiver's HTTP status; None when no response came
    error: str | None = None  # "timeout", "connection_error: …" when no response came


class WebhookTransport(Protocol):
    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> SendResult:
        """POST exactly `body` with exactly `headers`; never raises for network failures."""
        ...


@dataclass(frozen=True)
class CertificateBundle:
    cert_pem: bytes  # the server certificate (leaf first, then the chain up to the CA)
    key_pem: bytes  # its private key
    ca_pem: bytes  # the local CA certificate


class CertificateAuthority(Protocol):
    """The local CA webhook receivers on this machine get certificates from; the sender trusts
    it (adapters/webhooks/local_ca.py)."""

    async def ca_pem(self) -> bytes: ...

    async def issue(self, hostnames: Sequence[str]) -> CertificateBundle: ...


class DeliveryArchive(Protocol):
    """The finished deliveries (delivered, failed, cancelled) with their attempts, out of memory
    (adapters/store/delivery_archive.py: the history database). What is put is visible at once,
    before it reaches the disk; each call is synchronous and short (an indexed read)."""

    def put(self, deliveries: list[Delivery]) -> None:
        """Keep these (replacing what was kept under the same ids); the caller hands over
        copies it no longer changes."""
        ...

    def get(self, delivery_id: str) -> Delivery | None:
        """A copy of the delivery kept under this id."""
        ...

    def find(self, where: DeliveryFilter, limit: int | None, exclude: set[str]) -> list[Delivery]:
        """The matching deliveries kept whose id is not in `exclude`, in creation order
        (created_at, serial); with `limit`, the most recent ones."""
        ...

    def forget_finished_before(self, before: float) -> None:
        """Forget every delivery that finished (`Delivery.ended_at`) before `before`."""
        ...

    def clear(self) -> None:
        """Forget every delivery kept."""
        ...
