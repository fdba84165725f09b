"""Signing (simulator side) against verification (receiver side, conformance/calls/webhooks.py) and
a hand-computed HMAC, so neither implementation only agrees with itself."""

from __future__ import annotations

import hashlib
import hmac
import json

from rfqkit.webhook_signatures import (
    parse_signature_header,
    signature_problem,
    verify_signature,
)
from simulator.services.webhooks.outbox import (
    delivery_headers,
    encode_body,
    signature,
    signature_header,
)

SECRET = "whsec_test-secret_0123456789"
BODY = b'{"id":"rfq.expired:rfq_1","type":"rfq.expired"}'
T = 1_800_000_000


def test_signature_is_hmac_sha256_of_t_dot_body_keyed_with_the_whole_secret() -> None:
    expected = hmac.new(SECRET.encode("utf-8"), b"1800000000." + BODY, hashlib.sha256).hexdigest()
    assert signature(SECRET, T, BODY) == expected
    assert signature_header(SECRET, T, BODY) == f"t={T},v1={expected}"


def test_headers_of_a_delivery() -> None:
    headers = delivery_headers("rfq.expired:rfq_1", SECRET, T, BODY)
    assert headers["Content-Type"] == "application/json"
    assert headers["Service-Event-Id"] == "rfq.expired:rfq_1"
    assert headers["Service-Signature"] == signature_header(SECRET, T, BODY)


def test_body_is_serialized_once_compactly() -> None:
    body = {"id": "rfq.filled:rfq_1", "data": {"apiVersion": 2, "rfq": {"late": False}}}
    raw = encode_body(body)
    assert raw == b'{"id":"rfq.filled:rfq_1","data":{"apiVersion":2,"rfq":{"late":false}}}'
    assert json.loads(raw) == body


def test_receiver_verifies_what_the_sender_signs() -> None:
    header = signature_header(SECRET, T, BODY)
    assert verify_signature(SECRET, header, BODY, now=T + 10)
    assert not verify_signature(SECRET, header, BODY + b" ", now=T)  # raw bytes, not re-serialized
    assert not verify_signature(SECRET + "x", header, BODY, now=T)
    assert not verify_signature(SECRET.removeprefix("whsec_"), header, BODY, now=T)


def test_tolerance_applies_to_t() -> None:
    header = signature_header(SECRET, T, BODY)
    assert signature_problem(SECRET, header, BODY, now=T + 301) == "stale"
    assert signature_problem(SECRET, header, BODY, now=T - 301) == "stale"
    assert signature_problem(SECRET, header, BODY, tolerance=1000, now=T + 301) is None
    assert signature_problem(SECRET, header, BODY, tolerance=0, now=T + 10**6) is None


def test_malformed_headers_are_rejected() -> None:
    good = signature(SECRET, T, BODY)
    for header in ("", "v1=" + good, f"t={T}", f"t=abc,v1={good}", f"t=١٢,v1={good}", "garbage"):
        assert signature_problem(SECRET, header, BODY, now=T) == "malformed", header
    assert signature_problem(SECRET, None, BODY, now=T) == "malformed"


def test_any_of_several_v1_signatures_may_match() -> None:
    good = signature(SECRET, T, BODY)
    header = f"t={T},v1={'0' * 64},v1={good}"
    assert parse_signature_header(header) == (T, ["0" * 64, good])
    assert verify_signature(SECRET, header, BODY, now=T)
    assert not verify_signature(SECRET, f"t={T},v1=é{good[1:]}", BODY, now=T)
