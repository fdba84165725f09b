"""Cross-cutting conventions: X-Request-Id, the error envelope, body parsing and limits."""

from __future__ import annotations

import uuid

import pytest

from conformance.wire.client import Client
from conformance.wire.response_checks import (
    assert_allow,
    assert_error,
    assert_issues,
    assert_request_id,
)

REQUEST_ID = "rfq/overview/conventions/every-response-carries-x-request-id"
ENVELOPE = ("rfq/errors/envelope", "rfq/errors/request_id-equals-x-request-id-header")
ISSUES = "rfq/errors/details-optional-either-issues"
JSON_BODIES = "rfq/endpoints/all-bodies-json"

# The body size above which a request is refused with 413 (aiohttp's and our limit: 1 MiB).
MAX_BODY = 1024 * 1024

# Endpoints that take a JSON body: a public one of the real API and the simulator's clock.
BODY_ENDPOINTS = [
    pytest.param("/v2/rfq/preview", id="v2-rfq-preview"),
    pytest.param(
        "/_sim/clock/advance",
        id="sim-clock-advance",
        marks=pytest.mark.sim_only(because="simulator"),
    ),
]


def _unknown_path() -> str:
    return f"/v2/no-such-path-{uuid.uuid4().hex[:12]}"


@pytest.mark.spec(REQUEST_ID)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("GET", "/v2/health", id="v2-health"),
        pytest.param("GET", "/v1/health", id="v1-health"),
        pytest.param("GET", "/v2/openapi.json", id="v2-openapi"),
        pytest.param("GET", None, id="unknown-path-404"),
        pytest.param("DELETE", "/v2/health", id="wrong-method-405"),
    ],
)
def test_every_response_carries_request_id(http: Client, method: str, path: str | None) -> None:
    resp = http.request(method, path or _unknown_path())
    assert_request_id(resp)


@pytest.mark.spec(REQUEST_ID)
def test_request_ids_differ_between_requests(http: Client) -> None:
    ids = {assert_request_id(http.get("/v2/health")) for _ in range(3)}
    assert len(ids) == 3, f"X-Request-Id repeated across requests: {ids}"


@pytest.mark.spec(*ENVELOPE)
def test_unknown_path_is_404_not_found(http: Client) -> None:
    resp = http.get(_unknown_path())
    assert_error(resp, 404, "not_found")


@pytest.mark.spec(*ENVELOPE)
def test_unknown_path_post_is_404_not_found(http: Client) -> None:
    resp = http.post(_unknown_path(), json={})
    assert_error(resp, 404, "not_found")


@pytest.mark.spec(*ENVELOPE)
@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        pytest.param("DELETE", "/v2/health", "GET", id="delete-health"),
        pytest.param("PUT", "/v2/rfq/preview", "POST", id="put-preview"),
    ],
)
def test_wrong_method_is_405_with_allow(http: Client, method: str, path: str, allowed: str) -> None:
    resp = http.request(method, path)
    assert_error(resp, 405, "method_not_allowed")
    methods = assert_allow(resp, method)
    assert allowed in methods, f"Allow {methods!r} does not list {allowed}"


@pytest.mark.spec(*ENVELOPE, JSON_BODIES)
@pytest.mark.parametrize("path", BODY_ENDPOINTS)
def test_malformed_json_is_400_invalid_request(http: Client, path: str) -> None:
    resp = http.post(path, data=b'{"seconds": ', headers={"Content-Type": "application/json"})
    assert_error(resp, 400, "invalid_request")


@pytest.mark.spec(*ENVELOPE, JSON_BODIES)
@pytest.mark.parametrize("path", BODY_ENDPOINTS)
def test_non_json_content_type_is_400_invalid_request(http: Client, path: str) -> None:
    # The body is valid JSON: only the declared media type is wrong.
    resp = http.post(path, data=b'{"seconds": 1}', headers={"Content-Type": "text/plain"})
    assert_error(resp, 400, "invalid_request")


@pytest.mark.spec(*ENVELOPE, JSON_BODIES)
@pytest.mark.parametrize("path", BODY_ENDPOINTS)
def test_json_body_that_is_not_an_object_is_400(http: Client, path: str) -> None:
    resp = http.post(path, data=b"[1, 2, 3]", headers={"Content-Type": "application/json"})
    assert_error(resp, 400, "invalid_request")


@pytest.mark.spec(*ENVELOPE)
@pytest.mark.parametrize("path", BODY_ENDPOINTS)
def test_oversize_body_is_413_payload_too_large(http: Client, path: str) -> None:
    padding = b"x" * (MAX_BODY + 1024)
    resp = http.post(
        path,
        data=b'{"pad": "' + padding + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert_error(resp, 413, "payload_too_large")


@pytest.mark.spec(*ENVELOPE)
def test_oversize_body_with_a_key_is_413_payload_too_large(trader: Client) -> None:
    """The cap holds for a keyed endpoint too: a valid key does not lift it."""
    padding = b"x" * (MAX_BODY + 1024)
    resp = trader.post(
        "/v2/rfq/request",
        data=b'{"pad": "' + padding + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert_error(resp, 413, "payload_too_large")


@pytest.mark.sim_only(because="simulator")  # the control API's own validation
@pytest.mark.spec(*ENVELOPE, ISSUES)
@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"seconds": "x"}, id="string"),
        pytest.param({"seconds": -5}, id="negative"),
        pytest.param({}, id="missing"),
    ],
)
def test_schema_violation_is_400_with_issues(http: Client, body: dict[str, object]) -> None:
    resp = http.post("/_sim/clock/advance", json=body)
    error = assert_error(resp, 400, "invalid_request")
    assert_issues(error, "seconds")


@pytest.mark.spec(*ENVELOPE, ISSUES, "rfq/endpoints/request-body/chainid")
def test_preview_schema_violation_names_the_field(http: Client) -> None:
    resp = http.post(
        "/v2/rfq/preview",
        json={
            "chainId": "fifty-six",
            "sellToken": "0x" + "11" * 20,
            "buyToken": "0x" + "22" * 20,
            "sellAmount": "1000000000000000000",
        },
    )
    error = assert_error(resp, 400, "invalid_request")
    assert_issues(error, "chainId")
