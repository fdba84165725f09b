"""Log redaction: the public prefix of an API key survives, every secret is replaced, in the
message and in a traceback alike."""

from __future__ import annotations

import io
import logging
import random
import re

import pytest

from rfqkit.redaction import (
    REDACTED,
    SECRET_SHAPES,
    RedactingFormatter,
    Redactor,
    install_redaction,
    redact,
)

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


# Pieces of text near every shape a rule looks for: near misses, other cases, a word character
# before `0x`, letters that only match case-insensitively outside ASCII (Kelvin K, long s).
_PIECES = (
    *(KEY, SECRET, SIGNATURE, TX_HASH, ADDRESS, "x" + SIGNATURE, "_" + SIGNATURE),
    *("0x", "0X" + "ab" * 65, "rfqc_", "RFQC_abc", "xrfqc_abc", "whsec_Q1", "sk_", "rcl_x"),
    *(
        "_live_",
        "tx_live_",
        "sk_a-rfqc_b",
        "-whsec_",
        "xv1=" + "ab" * 9,
        "ab_TEST_1234.x",
        "v1=",
        "V1=" + "9f" * 10,
        "v1=" + "9f" * 8,
    ),
    *("t=1,v1=" + "ab" * 9, "Authorization", "AUTHORIZATION: ", "x-api-key=", "X-Rfq-Claim:'"),
    *("x-ramp-claim", "x-provider-signature: ", "service-signature=", "Bearer "),
    *("authori\u212aation", "\u017fervice-signature: v", "\u212a", "\u00e9"),
    *(" ", ":", "=", "'", '"', ",", ";", "}", "\\", "\n", "abc", "123", "ff"),
)


def test_the_literal_guards_never_skip_a_match() -> None:
    """`redact` runs a rule's pattern only where its needles occur: on many mixed texts the
    result is what every pattern run unguarded gives, and each pattern spelled from its
    literal gives what its `\\b` spelling gives."""
    chance = random.Random(20261129)
    # The shapes as first written, with `\\b` before their literals.
    plain = {
        2: re.compile(r"\b(rfqc_|rcl_|whsec_|sk_)[A-Za-z0-9_-]+"),
        3: re.compile(r"\b0x[0-9a-fA-F]{130,}"),
        4: re.compile(r"\b(v1=)[0-9a-fA-F]{16,}"),
    }
    for _ in range(4_000):
        text = "".join(chance.choice(_PIECES) for _ in range(chance.randint(1, 12)))
        unguarded = text
        for shape in SECRET_SHAPES:
            unguarded = shape.pattern.sub(shape.replacement, unguarded)
        assert redact(text) == unguarded, text
        for index, pattern in plain.items():
            shape = SECRET_SHAPES[index]
            assert shape.pattern.sub(shape.replacement, text) == pattern.sub(
                shape.replacement, text
            ), text


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
