"""The suite's webhook receiver behind the QA team's public URL (``--webhook-public-url``).

Against a deployment the suite cannot control, the service can only deliver to a URL it can
reach: the QA team gives a public https URL and forwards it (a tunnel or a reverse proxy, path
unchanged) to where the suite's receiver listens on this machine (``--webhook-listen``, default
``127.0.0.1:8765``). A tunnel that terminates TLS forwards plain http; one that passes TLS
through needs the receiver to serve the public name's certificate (``--webhook-tls-cert`` and
``--webhook-tls-key``). Tests use the public URL when they register an endpoint and read what
arrived from the receiver, as they do against the simulator.

There is one such address, so the receiver is held by one test at a time across xdist workers
(a lock file per listening address); the few tests that need it wait their turn.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import trustme

from conformance.wire.inputs import Inputs
from rfqkit.free_ports import unclaimed_port
from rfqkit.webhook_receiver import WebhookReceiver

DEFAULT_LISTEN = "127.0.0.1:8765"


def listen_address(inputs: Inputs) -> tuple[str, int]:
    """(host, port) the receiver binds: ``webhook_listen``, else the default."""
    text = inputs.webhook_listen or DEFAULT_LISTEN
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"webhook_listen must be HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def lock_path(host: str, port: int) -> Path:
    """The file whose lock says which test holds the listening address."""
    tag = hashlib.sha256(f"{host}:{port}".encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"rfqsim-conformance-receiver-{tag}.lock"


class PublicReceiver(WebhookReceiver):
    """A :class:`WebhookReceiver` whose ``url`` is the public URL that reaches it."""

    def __init__(
        self, public_url: str, cert_pem: str | None, key_pem: str | None, *, host: str, port: int
    ) -> None:
        super().__init__(cert_pem, key_pem, host=host, port=port, path=urlsplit(public_url).path)
        self.public_url = public_url

    @property
    def url(self) -> str:
        return self.public_url


@contextmanager
def public_receiver(inputs: Inputs) -> Iterator[PublicReceiver]:
    """The receiver listening behind ``inputs.webhook_public_url`` for the ``with`` block."""
    if not inputs.webhook_public_url:
        raise ValueError("no webhook_public_url given")
    host, port = listen_address(inputs)
    cert = key = None
    if inputs.webhook_tls_cert or inputs.webhook_tls_key:
        if not (inputs.webhook_tls_cert and inputs.webhook_tls_key):
            raise ValueError("webhook_tls_cert and webhook_tls_key go together")
        cert = Path(inputs.webhook_tls_cert).read_text()
        key = Path(inputs.webhook_tls_key).read_text()
    with lock_path(host, port).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test at a time holds the address
        try:
            receiver = PublicReceiver(inputs.webhook_public_url, cert, key, host=host, port=port)
            with receiver:
                yield receiver
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


CA_FILE = "webhook-ca.pem"  # rfqsim's local CA: key PEM then certificate PEM, owner-only


def local_state_dir(given: str | None, cwd: Path) -> Path:
    """Where a loopback ``rfqsim serve`` keeps its local webhook CA: ``given``, else
    ``$RFQSIM_STATE_DIR``, else ``.rfqsim``, relative paths from ``cwd`` (where it started)."""
    path = Path(given or os.environ.get("RFQSIM_STATE_DIR") or ".rfqsim")
    return path if path.is_absolute() else cwd / path


def loopback_public_webhook(state_dir: Path, directory: Path) -> Inputs:
    """What an operator of ``rfqsim serve --no-control-api`` hands a QA team for webhooks: a
    "public" https URL on a free loopback port with a certificate the simulator's sender trusts
    (issued from its local CA in ``state_dir``, created there first if no simulator has yet),
    written to ``directory``. The harness's foreign mode uses it in place of a tunnel."""
    path = state_dir / CA_FILE
    if not path.exists():
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fresh = trustme.CA(organization_name="rfqsim local webhook CA")
        temporary = state_dir / f".{CA_FILE}.{os.getpid()}.conformance"
        temporary.write_bytes(fresh.private_key_pem.bytes() + fresh.cert_pem.bytes())
        temporary.chmod(0o600)
        try:
            with contextlib.suppress(FileExistsError):  # a simulator made it first: use it
                path.hardlink_to(temporary)  # atomic, like the simulator's own creation
        finally:
            temporary.unlink()
    data = path.read_bytes()
    begin = data.index(b"-----BEGIN CERTIFICATE-----")
    ca = trustme.CA.from_pem(data[begin:], data[:begin])
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    cert_file, key_file = directory / "receiver-cert.pem", directory / "receiver-key.pem"
    cert_file.write_bytes(b"".join(pem.bytes() for pem in leaf.cert_chain_pems))
    key_file.write_bytes(leaf.private_key_pem.bytes())
    key_file.chmod(0o600)
    port = unclaimed_port()  # bound by the receiver later: not a port the kernel hands out
    return Inputs(
        webhook_public_url=f"https://127.0.0.1:{port}/webhooks",
        webhook_listen=f"127.0.0.1:{port}",
        webhook_tls_cert=str(cert_file),
        webhook_tls_key=str(key_file),
    )
