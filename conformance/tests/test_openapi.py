"""GET /v2/openapi.json: public, valid OpenAPI 3.1, errors described with the envelope."""

from __future__ import annotations

from typing import Any

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator

from conformance.deployment.target import Target
from conformance.wire.client import Client
from conformance.wire.openapi_checks import (
    error_responses_without_envelope,
    operations,
    operations_without_error_response,
)
from conformance.wire.response_checks import assert_json_content_type

DESCRIPTION = (
    "rfq/endpoints/get-v2-openapi-json",
    "rfq/versioning/item-4",
    "rfq/auth/api-keys/fully-public",
)
ENVELOPE = "rfq/errors/envelope"


@pytest.fixture(scope="module")
def openapi_doc(target: Target) -> dict[str, Any]:
    resp = Client(target.base_url).get("/v2/openapi.json")
    assert resp.status == 200, f"{resp.describe()}: {resp.raw[:500]!r}"
    assert_json_content_type(resp)
    doc = resp.json()
    assert isinstance(doc, dict), f"openapi.json is not an object: {doc!r}"
    return doc


@pytest.mark.spec(*DESCRIPTION)
def test_openapi_is_valid_3_1(openapi_doc: dict[str, Any]) -> None:
    version = openapi_doc.get("openapi")
    assert isinstance(version, str), f"openapi field missing: {version!r}"
    assert version.startswith("3.1."), f"openapi {version!r}, expected 3.1.x"
    validate(openapi_doc, cls=OpenAPIV31SpecValidator)


@pytest.mark.spec(*DESCRIPTION)
def test_openapi_describes_the_v2_endpoints(openapi_doc: dict[str, Any]) -> None:
    described = {(method, path) for path, method, _ in operations(openapi_doc)}
    assert ("GET", "/v2/health") in described
    assert ("GET", "/v2/openapi.json") in described


@pytest.mark.spec(*DESCRIPTION, ENVELOPE)
def test_every_operation_lists_an_error_response(openapi_doc: dict[str, Any]) -> None:
    missing = operations_without_error_response(openapi_doc)
    assert not missing, f"operations without any 4xx/5xx response: {missing}"


@pytest.mark.spec(*DESCRIPTION, ENVELOPE)
def test_error_responses_use_the_envelope(openapi_doc: dict[str, Any]) -> None:
    wrong = error_responses_without_envelope(openapi_doc)
    assert not wrong, f"error responses not described with the error envelope: {wrong}"
