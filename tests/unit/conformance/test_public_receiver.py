"""The suite's webhook receiver behind a QA team's public URL: where it listens, that it serves
what arrives at the public path, one holder at a time, and the loopback stand-in the harness's
foreign mode hands itself (a certificate from the simulator's local CA)."""

from __future__ import annotations

import fcntl
import ssl
import threading
import urllib.request
from pathlib import Path

import pytest
import trustme

from conformance.wire.inputs import Inputs
from conformance.wire.public_receiver import (
    CA_FILE,
    listen_address,
    lock_path,
    loopback_public_webhook,
    public_receiver,
)
from rfqkit.free_ports import unclaimed_port


def test_listen_address_defaults_and_parses() -> None:
    assert listen_address(Inputs()) == ("127.0.0.1", 8765)
    assert listen_address(Inputs(webhook_listen="0.0.0.0:9000")) == ("0.0.0.0", 9000)
    assert listen_address(Inputs(webhook_listen="[::1]:9001")) == ("::1", 9001)
    for bad in ("9000", "host:", ":80", "host:port"):
        with pytest.raises(ValueError, match="HOST:PORT"):
            listen_address(Inputs(webhook_listen=bad))


def test_plain_http_behind_a_tls_terminating_tunnel_reports_the_public_url() -> None:
    port = unclaimed_port()
    inputs = Inputs(
        webhook_public_url="https://hooks.example/qa/in", webhook_listen=f"127.0.0.1:{port}"
    )
    with public_receiver(inputs) as receiver:
        assert receiver.url == "https://hooks.example/qa/in"
        # What the tunnel forwards: the same path, plain http, to the listening address.
        posted = urllib.request.Request(
            f"http://127.0.0.1:{port}/qa/in", data=b'{"id":"e1"}', method="POST"
        )
        with urllib.request.urlopen(posted, timeout=10) as answer:
            assert answer.status == 200
        (got,) = receiver.wait_for_requests(1, timeout=10)
        assert (got.method, got.path, got.raw_body) == ("POST", "/qa/in", b'{"id":"e1"}')


def test_one_test_at_a_time_holds_the_address() -> None:
    port = unclaimed_port()
    inputs = Inputs(webhook_public_url="https://h.example/x", webhook_listen=f"127.0.0.1:{port}")
    entered = threading.Event()
    lock_file = lock_path("127.0.0.1", port)
    with public_receiver(inputs):
        assert _held(lock_file)  # another worker asking now would wait

        def second() -> None:
            with public_receiver(inputs):
                entered.set()

        waiter = threading.Thread(target=second)
        waiter.start()
    waiter.join(15)
    assert entered.is_set()  # and it got the address once the first let go
    assert not _held(lock_file)


def _held(path: Path) -> bool:
    with path.open("a") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False


def test_tls_files_must_come_in_pairs(tmp_path: Path) -> None:
    inputs = Inputs(webhook_public_url="https://h.example/x", webhook_tls_cert=str(tmp_path))
    with pytest.raises(ValueError, match="go together"), public_receiver(inputs):
        pass


def test_the_foreign_mode_stand_in_serves_https_with_the_local_cas_certificate(
    tmp_path: Path,
) -> None:
    state_dir, scratch = tmp_path / "state", tmp_path / "scratch"
    scratch.mkdir()
    given = loopback_public_webhook(state_dir, scratch)
    assert (state_dir / CA_FILE).stat().st_mode & 0o777 == 0o600  # made, owner-only
    assert [p.name for p in state_dir.iterdir()] == [CA_FILE]  # no temporary left behind
    assert given.webhook_public_url == f"https://{given.webhook_listen}/webhooks"
    data = (state_dir / CA_FILE).read_bytes()
    begin = data.index(b"-----BEGIN CERTIFICATE-----")
    ca = trustme.CA.from_pem(data[begin:], data[:begin])
    trusting = ssl.create_default_context(cadata=ca.cert_pem.bytes().decode())
    with public_receiver(given) as receiver:
        assert given.webhook_public_url is not None
        posted = urllib.request.Request(given.webhook_public_url, data=b"{}", method="POST")
        with urllib.request.urlopen(posted, timeout=10, context=trusting) as answer:
            assert answer.status == 200
        assert [r.path for r in receiver.wait_for_requests(1, timeout=10)] == ["/webhooks"]
    # A second call reuses the CA already there.
    loopback_public_webhook(state_dir, scratch)
    assert (state_dir / CA_FILE).read_bytes() == data
