"""GET /v2/health and GET /v1/health: public, wrapped in data, {status, version, time}."""

from __future__ import annotations

import pytest

from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_json_content_type, parse_iso_utc

WRAPPED = (
    "rfq/overview/conventions/successful-bodies-wrapped-object",
    "rfq/endpoints/success-bodies-wrapped-data",
)
TIMESTAMPS = "rfq/overview/conventions/timestamps-iso-8601-utc-except"


def _check_health(http: Client, path: str) -> None:
    resp = http.get(path)
    data = assert_data(resp, 200)
    assert_json_content_type(resp)
    assert isinstance(data, dict), f"health data is not an object: {data!r}"
    assert data.get("status") == "ok", f"status {data.get('status')!r}, expected 'ok'"
    version = data.get("version")
    assert isinstance(version, str), f"version is not a string: {version!r}"
    assert version, "empty version"
    parse_iso_utc(data.get("time"))


@pytest.mark.spec(
    "rfq/endpoints/get-v2-health", "rfq/auth/api-keys/fully-public", *WRAPPED, TIMESTAMPS
)
def test_v2_health(http: Client) -> None:
    _check_health(http, "/v2/health")


@pytest.mark.spec("v1/endpoints/get-v1-health", "v1/auth/item-1", TIMESTAMPS)
def test_v1_health(http: Client) -> None:
    _check_health(http, "/v1/health")
