"""GET /v1/openapi.json: public, valid OpenAPI 3.1, generated from the same route table as the
service; it lists only operations of spec 3's endpoint table (v1 gets no new endpoints), the
shared webhook registry among them, every error with the envelope, and Idempotency-Key on the
POSTs that create."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator

from conformance.calls.v1_calls import own_address_client
from conformance.deployment.target import Target
from conformance.wire.response_checks import (
    assert_json_content_type,
    assert_no_rate_limit_headers,
)

HTTP_METHODS = ("get", "put", "post", "delete", "patch")
# Spec 3 "Endpoints" (a templated segment written {id}).
SPEC_OPERATIONS = {
    ("GET", "/v1/health"),
    ("GET", "/v1/status"),
    ("GET", "/v1/openapi.json"),
    ("GET", "/v1/corridors"),
    ("GET", "/v1/quote"),
    ("GET", "/v1/order-book"),
    ("POST", "/v1/swaps"),
    ("GET", "/v1/swaps"),
    ("GET", "/v1/swaps/{id}"),
    ("POST", "/v1/swaps/{id}/submit"),
    ("GET", "/v1/limit-orders/quote"),
    ("POST", "/v1/limit-orders/prepare"),
    ("POST", "/v1/limit-orders"),
    ("GET", "/v1/limit-orders"),
    ("GET", "/v1/limit-orders/{id}"),
    ("POST", "/v1/webhooks"),
    ("GET", "/v1/webhooks"),
    ("DELETE", "/v1/webhooks/{id}"),
}
PUBLIC = {("GET", "/v1/health"), ("GET", "/v1/status"), ("GET", "/v1/openapi.json")}
CREATING = {("POST", "/v1/swaps"), ("POST", "/v1/limit-orders"), ("POST", "/v1/webhooks")}
RULES = ("v1/auth/item-1", "v1/versioning/item-1")


@pytest.fixture(scope="module")
def document(target: Target) -> dict[str, Any]:
    resp = own_address_client(target, target.client()).get("/v1/openapi.json")
    assert resp.status == 200, resp
    assert_json_content_type(resp)
    assert_no_rate_limit_headers(resp)
    doc = resp.json()
    assert isinstance(doc, dict)
    return doc


def _operations(doc: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    found = {}
    for path, item in doc["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                found[(method.upper(), re.sub(r"\{[^}]+\}", "{id}", path))] = item[method]
    return found


@pytest.mark.spec(*RULES)
def test_v1_openapi_is_public_valid_3_1(document: dict[str, Any]) -> None:
    assert str(document["openapi"]).startswith("3.1.")
    validate(document, cls=OpenAPIV31SpecValidator)


@pytest.mark.spec(*RULES, "v1/versioning/item-2", "v1/endpoints/scopes-per-endpoint-authentication")
def test_it_lists_only_spec_3_operations_with_keys_where_the_spec_needs_them(
    document: dict[str, Any],
) -> None:
    operations = _operations(document)
    assert set(operations) <= SPEC_OPERATIONS, set(operations) - SPEC_OPERATIONS
    assert set(operations) >= PUBLIC
    assert {
        ("POST", "/v1/webhooks"),
        ("GET", "/v1/webhooks"),
        ("DELETE", "/v1/webhooks/{id}"),
    } <= set(operations)
    assert ("GET", "/v1/corridors") in operations
    for row, operation in operations.items():
        security = operation.get("security")
        if row in PUBLIC:
            assert not security, (row, security)
        else:
            assert security, row
            assert {} not in security, f"{row} must not allow a call without a key"
            schemes = {name for requirement in security for name in requirement}
            assert schemes == {"bearerKey", "apiKeyHeader"}, (row, schemes)
            assert {"401", "403"} <= set(operation["responses"]), row


@pytest.mark.spec("v1/endpoints/every-post-creates-may", "v1/errors/same-envelope-document-1")
def test_creating_posts_document_idempotency_key_and_errors_the_envelope(
    document: dict[str, Any],
) -> None:
    envelope = {"$ref": "#/components/schemas/ErrorEnvelope"}
    status_schema = {"$ref": "#/components/schemas/ServiceStatus"}
    for row, operation in _operations(document).items():
        for status, response in operation["responses"].items():
            if not status.startswith(("4", "5")):
                continue
            schema = response["content"]["application/json"]["schema"]
            if row == ("GET", "/v1/status") and status == "503":
                # "503 down": the status document itself, not an error.
                assert schema["properties"]["data"] == status_schema, schema
            else:
                assert schema == envelope, (row, status)
        if row in CREATING:
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
            assert names == ["Idempotency-Key"], (row, names)
            assert {"400", "409"} <= set(operation["responses"]), row
