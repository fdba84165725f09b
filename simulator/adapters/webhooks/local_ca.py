"""The local certificate authority that lets webhook receivers on this machine serve https the
simulator trusts (endpoint URLs must be https; `rfqsim webhooks listen`).

Generated with `trustme` on first use and kept in the state directory (`webhooks.state_dir`,
else `$RFQSIM_STATE_DIR`, else `./.rfqsim`) as one PEM file holding the CA key and certificate,
so every simulator started from the same directory (xdist workers, restarts) shares one CA.
Creation is atomic: the file is written under a temporary name and hard-linked into place, and
a process that loses the race uses the winner's CA. The key file is readable by its owner only.
It is a test CA: it signs certificates for whatever hostnames are asked for, so never install
it into a system trust store."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

import trustme

from simulator.services.webhooks.ports import CertificateBundle

CA_FILE = "webhook-ca.pem"
STATE_DIR_ENV = "RFQSIM_STATE_DIR"
DEFAULT_STATE_DIR = ".rfqsim"
_CERT_BEGIN = b"-----BEGIN CERTIFICATE-----"


def resolve_state_dir(configured: str | None, environ: Mapping[str, str] | None = None) -> Path:
    """`webhooks.state_dir`, else `$RFQSIM_STATE_DIR`, else `./.rfqsim` (current directory)."""
    env = os.environ if environ is None else environ
    return Path(configured or env.get(STATE_DIR_ENV) or DEFAULT_STATE_DIR)


def _split(data: bytes) -> tuple[bytes, bytes]:
    """(certificate PEM, private key PEM) from the stored file (key first, then certificate)."""
    index = data.find(_CERT_BEGIN)
    if index <= 0:
        raise ValueError("the local CA file holds no private key and certificate")
    return data[index:], data[:index]


def load_or_create(directory: Path) -> trustme.CA:
    path = directory / CA_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        ca = trustme.CA(organization_name="rfqsim local webhook CA")
        data = ca.private_key_pem.bytes() + ca.cert_pem.bytes()
        temporary = directory / f".{CA_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            try:
                os.link(temporary, path)  # atomic, and fails if another process was first
            except FileExistsError:
                data = path.read_bytes()
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
    cert_pem, key_pem = _split(data)
    return trustme.CA.from_pem(cert_pem, key_pem)


class LocalCa:
    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._ca: trustme.CA | None = None  # loaded or created on first use
        self._lock = asyncio.Lock()  # guards the one-time load-or-create of _ca

    async def ca(self) -> trustme.CA:
        async with self._lock:
            if self._ca is None:
                self._ca = await asyncio.to_thread(load_or_create, self.state_dir)
            return self._ca

    async def ca_pem(self) -> bytes:
        return (await self.ca()).cert_pem.bytes()

    async def issue(self, hostnames: Sequence[str]) -> CertificateBundle:
        """A server certificate for these hostnames / IP addresses, signed by the local CA."""
        ca = await self.ca()
        leaf = await asyncio.to_thread(ca.issue_cert, *hostnames)
        return CertificateBundle(
            cert_pem=b"".join(pem.bytes() for pem in leaf.cert_chain_pems),
            key_pem=leaf.private_key_pem.bytes(),
            ca_pem=ca.cert_pem.bytes(),
        )
