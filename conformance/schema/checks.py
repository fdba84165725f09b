"""The harness' own schemathesis check: what the spec says about every response that an OpenAPI
document cannot say.

``rfqsim_request_id``: every response carries exactly one non-empty ``X-Request-Id`` (spec
"Conventions"), and an error envelope's ``error.request_id`` equals it (spec "Errors"). The
simulator's document declares the header but not as required, and no document can tie a body
field to a header value.

Importing this module registers the check with schemathesis (a process-wide registry), so it runs
alongside the built-in ones whenever checks are enabled.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis
from schemathesis.core.failures import Failure, Severity

REQUEST_ID_CHECK = "rfqsim_request_id"
REQUEST_ID_HEADER = "x-request-id"


class RequestIdViolation(Failure):
    """A response without exactly one X-Request-Id, or an envelope whose request_id differs."""

    code = "ST990"
    checks = (REQUEST_ID_CHECK,)
    kind_title = "X-Request-Id convention violated"

    def __init__(self, *, operation: str, message: str, title: str | None = None) -> None:
        super().__init__(operation=operation, title=title, message=message, severity=Severity.HIGH)


def _header_values(headers: dict[str, list[str]], name: str) -> list[str]:
    return [v for key, values in headers.items() if key.lower() == name for v in values]


def _envelope_request_id(content: bytes) -> tuple[bool, Any]:
    """(is an error envelope, its request_id)."""
    try:
        body = json.loads(content or b"")
    except (ValueError, UnicodeDecodeError):
        return False, None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False, None
    return True, error.get("request_id")


def rfqsim_request_id(ctx: Any, response: Any, case: Any) -> bool | None:
    label = str(case.operation.label)
    values = _header_values(response.headers, REQUEST_ID_HEADER)
    if len(values) != 1 or not values[0].strip():
        raise RequestIdViolation(
            operation=label,
            title="Response without exactly one X-Request-Id",
            message=f"X-Request-Id values: {values!r} (status {response.status_code})",
        )
    if response.status_code >= 400:
        is_envelope, request_id = _envelope_request_id(response.content)
        if is_envelope and request_id != values[0]:
            raise RequestIdViolation(
                operation=label,
                title="error.request_id differs from X-Request-Id",
                message=f"error.request_id {request_id!r}, X-Request-Id {values[0]!r}",
            )
    return None


schemathesis.check(rfqsim_request_id)
