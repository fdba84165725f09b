"""Ports of the webhooks area: the HTTPS transport deliveries go through and the local
certificate authority receivers get certificates from. Adapters (adapters/webhooks/) implement
them; unit tests use fakes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


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
