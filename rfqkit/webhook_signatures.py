"""Webhook signatures as a receiver checks them: ``Service-Signature`` is ``t=<unix>,v1=<hex>``,
HMAC-SHA256 keyed with the endpoint's whole ``signingSecret`` as UTF-8 over ``b"<t>." + raw
body``, compared in constant time with a tolerance on ``t``. Standard library only, so any
receiver (ours, the load tests' sink, an integrator's) can use it."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Literal

SIGNATURE_HEADER = "Service-Signature"
EVENT_ID_HEADER = "Service-Event-Id"
DEFAULT_TOLERANCE_S = 300

SignatureProblem = Literal["malformed", "mismatch", "stale"]


# -- signatures ----------------------------------------------------------------------------


def parse_signature_header(header: str) -> tuple[int, list[str]] | None:
    """``(t, [v1 signatures])`` from ``t=<unix>,v1=<hex>[,v1=<hex>…]``; None when malformed."""
    timestamp: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            return None
        if name == "t":
            if not value.isascii() or not value.isdigit():
                return None
            timestamp = int(value)
        elif name == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        return None
    return timestamp, signatures


def expected_signature(secret: str, timestamp: int, raw_body: bytes) -> str:
    message = str(timestamp).encode() + b"." + raw_body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_problem(
    secret: str,
    header: str | None,
    raw_body: bytes,
    tolerance: int = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> SignatureProblem | None:
    """None when the signature is good and ``t`` is within ``tolerance`` seconds of ``now``
    (default: this machine's clock, which rfqsim signs with even after ``/_sim/clock/advance``;
    pass another for a sender whose clock differs); else why not. ``tolerance=0`` skips the
    time check."""
    parsed = parse_signature_header(header) if header else None
    if parsed is None:
        return "malformed"
    timestamp, candidates = parsed
    expected = expected_signature(secret, timestamp, raw_body).encode()
    if not any(hmac.compare_digest(expected, c.encode()) for c in candidates):
        return "mismatch"
    current = time.time() if now is None else now
    if tolerance and abs(current - timestamp) > tolerance:
        return "stale"
    return None


def verify_signature(
    secret: str,
    header: str,
    raw_body: bytes,
    tolerance: int = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """Whether ``header`` signs ``raw_body`` with ``secret`` and its ``t`` is fresh enough."""
    return signature_problem(secret, header, raw_body, tolerance, now) is None


class InvalidSignature(ValueError):
    def __init__(self, problem: SignatureProblem) -> None:
        super().__init__(f"webhook signature {problem}")
        self.problem = problem
