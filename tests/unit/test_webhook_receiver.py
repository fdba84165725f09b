"""conformance/calls/webhooks.py: the safe receiver's correction rule and the threaded test
receiver."""

from __future__ import annotations

import json
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trustme

from conformance.calls.webhooks import (
    RfqEventReceiver,
)
from conformance.wire.client import request
from rfqkit.webhook_receiver import (
    WebhookReceiver,
)
from rfqkit.webhook_signatures import (
    InvalidSignature,
    expected_signature,
)
from rfqsim.webhooks_listen import describe


def _event(event_type: str, rfq_id: str = "rfq_1", **rfq: Any) -> dict[str, Any]:
    return {
        "id": f"{event_type}:{rfq_id}",
        "type": event_type,
        "created": "2027-01-15T08:00:00.000Z",
        "data": {"apiVersion": 2, "rfq": {"id": rfq_id, **rfq}},
    }


def test_filled_overwrites_expired_and_failed_never_the_reverse() -> None:
    receiver = RfqEventReceiver()
    assert receiver.handle(_event("rfq.expired"))
    assert receiver.rfqs["rfq_1"].status == "expired"
    assert receiver.handle(_event("rfq.filled", late=True, supersedes="rfq.expired"))
    view = receiver.rfqs["rfq_1"]
    assert (view.status, view.late, view.supersedes) == ("filled", True, "rfq.expired")
    assert receiver.handle(_event("rfq.failed"))  # out of order: must not undo the fill
    assert receiver.rfqs["rfq_1"].status == "filled"
    receiver.handle(_event("rfq.failed", "rfq_2"))
    receiver.handle(_event("rfq.filled", "rfq_2", late=True, supersedes="rfq.failed"))
    assert receiver.rfqs["rfq_2"].status == "filled"


def test_duplicates_are_dropped_on_the_event_id() -> None:
    receiver = RfqEventReceiver()
    assert receiver.handle(_event("rfq.expired"))
    assert not receiver.handle(_event("rfq.expired"))
    assert receiver.seen == {"rfq.expired:rfq_1"}
    assert receiver.handle({"id": "swap.filled:sw_1", "type": "swap.filled", "data": {}})
    assert set(receiver.rfqs) == {"rfq_1"}


def test_handle_delivery_verifies_first() -> None:
    receiver = RfqEventReceiver()
    raw = json.dumps(_event("rfq.expired")).encode()
    now = 1_800_000_000
    header = f"t={now},v1={expected_signature('whsec_s', now, raw)}"
    assert receiver.handle_delivery("whsec_s", {"service-signature": header}, raw, now=now)
    with pytest.raises(InvalidSignature) as bad:
        receiver.handle_delivery("whsec_other", {"Service-Signature": header}, raw, now=now)
    assert bad.value.problem == "mismatch"
    with pytest.raises(InvalidSignature) as stale:
        receiver.handle_delivery("whsec_s", {"Service-Signature": header}, raw, now=now + 301)
    assert stale.value.problem == "stale"


def test_describe_prints_type_rfq_late_and_supersedes() -> None:
    line = describe(_event("rfq.filled", late=True, supersedes="rfq.expired"))
    assert "rfq.filled  rfq=rfq_1  late=true  supersedes=rfq.expired  [rfq.filled:rfq_1]" in line
    line = describe(_event("rfq.expired", failReason=None))
    assert "rfq.expired  rfq=rfq_1  [rfq.expired:rfq_1]" in line


@pytest.fixture(scope="module")
def certificate() -> tuple[bytes, bytes, trustme.CA]:
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    return b"".join(p.bytes() for p in leaf.cert_chain_pems), leaf.private_key_pem.bytes(), ca


def _post(url: str, ca: trustme.CA, tmp_path: Path, timeout: float = 5.0) -> int:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return request("POST", url, data=b'{"a":1}', timeout=timeout, ssl_context=context).status


def test_scripted_answers_hang_and_restart_on_the_same_port(
    certificate: tuple[bytes, bytes, trustme.CA], tmp_path: Path
) -> None:
    cert, key, ca = certificate
    with WebhookReceiver(cert, key, hang_seconds=0.3) as receiver:
        assert receiver.url.startswith("https://127.0.0.1:")
        receiver.respond_with(500, "hang")
        assert _post(receiver.url, ca, tmp_path) == 500
        began = time.monotonic()
        assert _post(receiver.url, ca, tmp_path) == 503  # held, then given up
        assert time.monotonic() - began >= 0.25
        assert _post(receiver.url, ca, tmp_path) == 200
        port = receiver.port
        receiver.stop()
        with pytest.raises(ConnectionRefusedError):
            _post(receiver.url, ca, tmp_path, timeout=2)
        receiver.restart()
        assert receiver.port == port
        assert _post(receiver.url, ca, tmp_path) == 200
        got = receiver.wait_for_requests(4)
        assert [r.raw_body for r in got] == [b'{"a":1}'] * 4
        assert got[0].header("content-type") is None
        with pytest.raises(AssertionError, match="expected 5"):
            receiver.wait_for_requests(5, timeout=0.1)


def test_a_hanging_request_ends_when_the_receiver_stops(
    certificate: tuple[bytes, bytes, trustme.CA], tmp_path: Path
) -> None:
    cert, key, ca = certificate
    receiver = WebhookReceiver(cert, key, hang_seconds=30).start()
    try:
        receiver.respond_with("hang")
        outcome: list[object] = []

        def call() -> None:
            try:
                outcome.append(_post(receiver.url, ca, tmp_path, timeout=10))
            except OSError as exc:
                outcome.append(exc)

        thread = threading.Thread(target=call)
        thread.start()
        receiver.wait_for_requests(1)
        began = time.monotonic()
        receiver.stop()
        thread.join(timeout=10)
        assert time.monotonic() - began < 5
        assert outcome, "the client never returned"
    finally:
        receiver.close()


def test_wait_for_event_picks_the_object_and_the_endpoints_secret(
    certificate: tuple[bytes, bytes, trustme.CA],
) -> None:
    """On a receiver several endpoints share, one event reaches each endpoint signed with that
    endpoint's secret; another object's event and the other endpoint's copy are left alone."""
    cert, key, ca = certificate
    context = ssl.create_default_context()
    ca.configure_trust(context)

    def deliver(receiver: WebhookReceiver, event: dict[str, Any], secret: str) -> None:
        raw = json.dumps(event).encode()
        signature = f"t=1795800000,v1={expected_signature(secret, 1795800000, raw)}"
        headers = {"Content-Type": "application/json", "Service-Signature": signature}
        sent = request("POST", receiver.url, data=raw, headers=headers, ssl_context=context)
        assert sent.status == 200

    with WebhookReceiver(cert, key) as receiver:
        deliver(receiver, _event("rfq.filled", "rfq_other"), "whsec_mine")
        deliver(receiver, _event("rfq.filled", "rfq_1"), "whsec_theirs")
        deliver(receiver, _event("rfq.expired", "rfq_1"), "whsec_mine")
        deliver(receiver, _event("rfq.filled", "rfq_1"), "whsec_mine")
        (any_copy,) = receiver.wait_for_event("rfq.filled", "rfq_1", timeout=1)
        assert any_copy.header("Service-Signature") == receiver.requests[1].header(
            "Service-Signature"
        )
        (mine,) = receiver.wait_for_event("rfq.filled", "rfq_1", timeout=1, secret="whsec_mine")
        assert mine is receiver.requests[3]
        with pytest.raises(AssertionError, match="1 signed with another secret"):
            receiver.wait_for_event("rfq.filled", "rfq_1", 2, timeout=0.2, secret="whsec_mine")
