from __future__ import annotations

import hashlib
import hmac

from provider_sandbox.webhooks import signature


def test_signature_is_stripe_style_hmac_over_timestamp_and_raw_body() -> None:
    body = b'{"id":"evt_1","type":"transfer.updated"}'
    header = signature("whsec_x", 1_700_000_000, body)
    timestamp, v1 = header.split(",")
    assert timestamp == "t=1700000000"
    expected = hmac.new(b"whsec_x", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert v1 == f"v1={expected}"


def test_signature_changes_with_body_secret_and_time() -> None:
    base = signature("s", 1, b"{}")
    assert signature("s", 1, b"{ }") != base
    assert signature("t", 1, b"{}") != base
    assert signature("s", 2, b"{}") != base
