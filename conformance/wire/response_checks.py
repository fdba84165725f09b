"""Checks every response of the service must pass, whatever the endpoint: one non-empty
``X-Request-Id`` (:func:`assert_request_id`), a JSON content type, the success body
``{data: ...}`` (:func:`assert_data`; the body alone :func:`assert_data_body`) or the spec's
error envelope ``{error: {code, message, request_id, details?}}`` with ``request_id`` equal to
the header (:func:`assert_error`; for any status and code :func:`assert_envelope` and
:func:`assert_envelope_request_id`), ``details.issues`` naming the offending fields
(:func:`assert_issues`), the ``X-RateLimit-*`` and ``Retry-After`` headers, and ISO-8601 UTC
timestamps (:func:`parse_iso_utc`, :func:`iso_seconds`; two spellings of one instant:
:func:`same_instant`). Each fails the test with the request and the body it saw.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from conformance.wire.client import REQUEST_ID_HEADER, Response
from conformance.wire.wording import shown
from rfqkit.timestamps import parse_iso


def assert_request_id(resp: Response) -> str:
    """The response carries a non-empty ``X-Request-Id``; returns it."""
    values = resp.headers.get_all(REQUEST_ID_HEADER)
    assert len(values) == 1, (
        f"{resp.describe()}: expected one X-Request-Id header, got {shown(values)}"
    )
    assert values[0].strip(), f"{resp.describe()}: empty X-Request-Id"
    return values[0]


def assert_json_content_type(resp: Response) -> None:
    content_type = (resp.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    assert content_type == "application/json", (
        f"{resp.describe()}: Content-Type {shown(resp.headers.get('Content-Type'))}, "
        "expected application/json"
    )


def assert_data(resp: Response, status: int = 200) -> Any:
    """A success: the expected status and a JSON object body ``{data: ...}``; returns data."""
    assert resp.status == status, f"{resp.describe()}: expected {status}: {shown(resp.raw[:500])}"
    assert_request_id(resp)
    return assert_data_body(resp)


def assert_data_body(resp: Response) -> Any:
    """Whatever the status: a JSON content type and an object body ``{data: ...}`` without
    ``error``; returns data."""
    assert_json_content_type(resp)
    body = resp.json()
    assert isinstance(body, dict), f"{resp.describe()}: body is not an object: {shown(body)}"
    assert "data" in body, f"{resp.describe()}: success body lacks 'data': {shown(body)}"
    assert "error" not in body, f"{resp.describe()}: success body carries 'error': {shown(body)}"
    return body["data"]


def assert_error(
    resp: Response, status: int, code: str, reason: str | None = None
) -> dict[str, Any]:
    """The spec's error envelope with this status and code; returns the ``error`` object.

    Checks the JSON content type, ``{error: {code, message, request_id, details?}}``, that
    ``request_id`` equals the ``X-Request-Id`` header and, when ``reason`` is given, that
    ``details.reason`` equals it.
    """
    assert resp.status == status, (
        f"{resp.describe()}: expected {status} {code}: {shown(resp.raw[:500])}"
    )
    header_id = assert_request_id(resp)
    assert_json_content_type(resp)
    error = assert_envelope(resp)
    assert error.get("code") == code, (
        f"{resp.describe()}: error.code {shown(error.get('code'))}, expected {shown(code)}"
    )
    assert_envelope_request_id(resp, error, header_id)
    if reason is not None:
        got = (error.get("details") or {}).get("reason")
        assert got == reason, (
            f"{resp.describe()}: details.reason {shown(got)}, expected {shown(reason)}"
        )
    return error


def assert_envelope(resp: Response) -> dict[str, Any]:
    """Whatever the status and code: the body is ``{error: {code, message, request_id,
    details?}}`` with a non-empty string code and message and no ``data``; returns ``error``.
    (The content type and the request id are :func:`assert_json_content_type` and
    :func:`assert_envelope_request_id`.)"""
    body = resp.json()
    assert isinstance(body, dict), f"{resp.describe()}: error body is not an object: {shown(body)}"
    assert "data" not in body, f"{resp.describe()}: error body carries 'data': {shown(body)}"
    error = body.get("error")
    assert isinstance(error, dict), f"{resp.describe()}: no error object: {shown(body)}"
    code = error.get("code")
    assert isinstance(code, str), f"{resp.describe()}: error.code is not a string: {shown(code)}"
    assert code, f"{resp.describe()}: empty error code"
    message = error.get("message")
    assert isinstance(message, str), f"{resp.describe()}: message is not a string: {shown(message)}"
    assert message, f"{resp.describe()}: empty error message"
    details = error.get("details")
    assert details is None or isinstance(details, dict), (
        f"{resp.describe()}: details must be an object when present: {shown(details)}"
    )
    return error


def assert_envelope_request_id(
    resp: Response, error: Mapping[str, Any], header_id: str | None
) -> None:
    """``error.request_id`` equals the ``X-Request-Id`` header."""
    assert error.get("request_id") == header_id, (
        f"{resp.describe()}: error.request_id {shown(error.get('request_id'))} "
        f"!= X-Request-Id {shown(header_id)}"
    )


RATE_LIMIT_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


def assert_rate_limit_headers(resp: Response) -> tuple[int, int, int]:
    """The per-key limiter's headers are present, once each, as non-negative integers.

    Returns ``(limit, remaining, reset_seconds)``; checks ``remaining <= limit``.
    """
    values: list[int] = []
    for name in RATE_LIMIT_HEADERS:
        got = resp.headers.get_all(name)
        assert len(got) == 1, f"{resp.describe()}: expected one {name} header, got {shown(got)}"
        assert got[0].strip().isdigit(), f"{resp.describe()}: {name} is {shown(got[0])}"
        values.append(int(got[0]))
    limit, remaining, reset = values
    assert remaining <= limit, f"{resp.describe()}: remaining {remaining} > limit {limit}"
    return limit, remaining, reset


def assert_no_rate_limit_headers(resp: Response) -> None:
    """None of the X-RateLimit-* headers is present (the response was not rate-accounted)."""
    present = [name for name in RATE_LIMIT_HEADERS if name in resp.headers]
    assert not present, f"{resp.describe()}: unexpected {present}: {shown(resp.headers)}"


def assert_retry_after(resp: Response, at_most: int = 60) -> int:
    """``Retry-After`` is one delay in whole seconds, 1..``at_most``; returns it."""
    got = resp.headers.get_all("Retry-After")
    assert len(got) == 1, f"{resp.describe()}: expected one Retry-After header, got {shown(got)}"
    assert got[0].strip().isdigit(), f"{resp.describe()}: Retry-After is {shown(got[0])}"
    seconds = int(got[0])
    assert 1 <= seconds <= at_most, f"{resp.describe()}: Retry-After {seconds}"
    return seconds


def assert_allow(resp: Response, refused: str) -> set[str]:
    """A 405 names the methods the path does allow in ``Allow`` (RFC 9110), never the refused
    one; returns them."""
    allow = resp.headers.get("Allow")
    assert allow, f"{resp.describe()}: 405 without an Allow header: {shown(resp.headers)}"
    methods = {m.strip().upper() for m in allow.split(",") if m.strip()}
    assert refused.upper() not in methods, f"Allow {shown(allow)} lists the refused method"
    return methods


def issue_names_field(issue: Any, field_name: str) -> bool:
    """Whether one ``details.issues`` item points at ``field_name`` (path, loc, field, ...)."""
    if not isinstance(issue, dict):
        return False
    for key in ("path", "loc", "field", "name", "pointer", "param"):
        value = issue.get(key)
        if isinstance(value, str) and re.search(rf"(^|[^A-Za-z0-9_]){field_name}$", value):
            return True
        if isinstance(value, list) and field_name in [str(part) for part in value]:
            return True
    return False


def assert_issues(error: Mapping[str, Any], *field_names: str) -> list[Any]:
    """``details.issues`` is a non-empty array and names every given field; returns it."""
    details = error.get("details") or {}
    issues = details.get("issues") if isinstance(details, dict) else None
    assert isinstance(issues, list), f"details.issues is not an array: {shown(error)}"
    assert issues, f"details.issues is empty: {shown(error)}"
    for name in field_names:
        assert any(issue_names_field(issue, name) for issue in issues), (
            f"no issue names field {shown(name)}: {shown(issues)}"
        )
    return issues


def parse_iso_utc(value: Any) -> datetime:
    """Parse an ISO-8601 UTC timestamp (``Z`` or ``+00:00``); fails on anything else."""
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise AssertionError(str(exc)) from None


def iso_seconds(value: Any) -> float:
    return parse_iso_utc(value).timestamp()


def same_instant(first: str, again: str) -> bool:
    """Two spellings of one instant: the same to the millisecond, or within a second where
    either is in whole seconds (the spec does not say the precision, so two views may differ
    in it)."""
    a, b = iso_seconds(first), iso_seconds(again)
    return abs(a - b) < (1.0 if a.is_integer() or b.is_integer() else 0.001)
