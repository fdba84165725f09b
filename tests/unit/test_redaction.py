"""Log redaction: the public prefix of an API key survives, every secret is replaced, in the
message and in a traceback alike."""

from __future__ import annotations

import io
import logging

import pytest

from rfqkit.redaction import REDACTED, RedactingFormatter, Redactor, install_redaction, redact

SECRET = "Zk3qT8yWv0nP4rXc1bLd7eFg2hJm5sQa9uIo6tRw3eY"
KEY = f"tx_live_3f2a9c1b7e04.{SECRET}"
SIGNATURE = "0x" + "ab" * 65
TX_HASH = "0x" + "cd" * 32
ADDRESS = "0x" + "12" * 20


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {KEY} refused", "key tx_live_3f2a9c1b7e04.<redacted> refused"),
        (f"tx_test_00112233aabb.{SECRET}", "tx_test_00112233aabb.<redacted>"),
        ("claim rfqc_AbC-123_xyz ok", "claim rfqc_<redacted> ok"),
        ("ramp claim rcl_AbC-123_xyz", "ramp claim rcl_<redacted>"),
        ("secret whsec_q1W2e3R4", "secret whsec_<redacted>"),
        ("provider sk_sandbox_rfqsim", "provider sk_<redacted>"),
        (f"signature {SIGNATURE}", "signature 0x<redacted>"),
        (
            "Service-Signature: t=1700000000,v1=" + "9f" * 32,
            "Service-Signature: <redacted>,v1=<redacted>",
        ),
        (f"b'Authorization: Bearer {KEY}\\x00'", "b'Authorization: <redacted>\\x00'"),
        ("{'X-API-Key': 'whatever-it-is'}", "{'X-API-Key': '<redacted>'}"),
        ("x-rfq-claim: abc\\x00def", "x-rfq-claim: <redacted>\\x00def"),
        (f"tx {TX_HASH} from {ADDRESS}", f"tx {TX_HASH} from {ADDRESS}"),
        ("task_queue risk_level", "task_queue risk_level"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_traceback_quoting_a_key_is_redacted() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("test.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        install_redaction(logger)
        assert isinstance(handler.formatter, RedactingFormatter)
        try:
            raise ValueError(f"Invalid header value char: b'X-API-Key: {KEY}\\r'")
        except ValueError:
            logger.exception("Error handling request for %s", KEY)
    finally:
        logger.removeHandler(handler)
    logged = stream.getvalue()
    assert SECRET not in logged
    assert "ERROR Error handling request for tx_live_3f2a9c1b7e04.<redacted>" in logged
    assert "ValueError: Invalid header value char" in logged


# By name, whatever the value's shape (the proxy's report, issue 32).
PLAIN = "plainSecretWithoutAnyPrefix9"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f'{{"claimToken": "{PLAIN}", "x": 1}}', '{"claimToken": "<redacted>", "x": 1}'),
        (f"{{'signingSecret': '{PLAIN}'}}", "{'signingSecret': '<redacted>'}"),
        (f'"signature":"{PLAIN}"', '"signature":"<redacted>"'),
        (f'{{"claimToken": "{PLAIN[:10]}', '{"claimToken": "<redacted>"'),  # cut short
        (f"claimToken={PLAIN}&chainId=97", "claimToken=<redacted>&chainId=97"),
        (f"X-Auth-Token: {PLAIN}", "X-Auth-Token: <redacted>"),
        ("Idempotency-Key: idem-123456789", "Idempotency-Key: idem-123456789"),  # no secret
        (f"the token {PLAIN} lacks rfqc_", "the token <redacted> lacks rfqc_"),  # known value
    ],
)
def test_a_redactor_goes_by_name_and_by_known_value(text: str, expected: str) -> None:
    redactor = Redactor(["X-Auth-Token"])
    assert redactor.text(text, known={PLAIN}) == expected


def test_a_redactor_finds_secret_values_in_headers_and_nested_json() -> None:
    redactor = Redactor(["x-auth-token"])
    headers = [("Authorization", f"Bearer {PLAIN}"), ("X-Auth-Token", "custom-1"), ("A", "b")]
    assert redactor.header_values(headers) == {f"Bearer {PLAIN}", PLAIN, "custom-1"}
    body = {"data": [{"takerProof": {"nonce": "n", "signature": "s-1"}, "claimToken": "c-1"}]}
    assert redactor.field_values(body) == {"s-1", "c-1"}
    assert redactor.json(body) == {
        "data": [{"takerProof": {"nonce": "n", "signature": REDACTED}, "claimToken": REDACTED}]
    }
    assert redactor.header("x-AUTH-token", "custom-1") == REDACTED
