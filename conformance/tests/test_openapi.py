"""GET /v2/openapi.json: public, valid OpenAPI 3.1, errors described with the envelope."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator

from conformance.client import Client
from conformance.response_checks import assert_json_content_type
from conformance.target import Target

DESCRIPTION = (
    "rfq/endpoints/get-v2-openapi-json",
    "rfq/versioning/item-4",
    "rfq/auth/api-keys/fully-public",
)
ENVELOPE = "rfq/errors/envelope"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# Paths whose errors must use the v2 envelope (the rates feed has its own {error: string}).
ENVELOPE_PREFIXES = ("/v1/", "/v2/")


@pytest.fixture(scope="module")
def openapi_doc(target: Target) -> dict[str, Any]:
    resp = Client(target.base_url).get("/v2/openapi.json")
    assert resp.status == 200, f"{resp.describe()}: {resp.raw[:500]!r}"
    assert_json_content_type(resp)
    doc = resp.json()
    assert isinstance(doc, dict), f"openapi.json is not an object: {doc!r}"
    return doc


def _resolve(doc: Mapping[str, Any], node: Any) -> Any:
    """Follow local ``$ref`` pointers (``#/components/...``) until a non-ref node."""
    seen: set[str] = set()
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        assert ref.startswith("#/"), f"non-local $ref {ref!r}"
        assert ref not in seen, f"$ref cycle at {ref!r}"
        seen.add(ref)
        target: Any = doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            assert isinstance(target, Mapping), f"bad $ref {ref!r}"
            assert part in target, f"dangling $ref {ref!r}"
            target = target[part]
        node = target
    return node


def _is_envelope(doc: Mapping[str, Any], schema: Any) -> bool:
    """``{error: {code, message, request_id, ...}}`` with error and its three members required."""
    schema = _resolve(doc, schema)
    if not isinstance(schema, Mapping):
        return False
    for combinator in ("allOf", "oneOf", "anyOf"):
        parts = schema.get(combinator)
        if isinstance(parts, list) and parts:
            checks = [_is_envelope(doc, part) for part in parts]
            return any(checks) if combinator == "allOf" else all(checks)
    properties = schema.get("properties") or {}
    if "error" not in properties or "error" not in (schema.get("required") or []):
        return False
    error = _resolve(doc, properties["error"])
    if not isinstance(error, Mapping):
        return False
    members = set((error.get("properties") or {}).keys())
    required = set(error.get("required") or [])
    wanted = {"code", "message", "request_id"}
    return wanted <= members and wanted <= required


def _operations(doc: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    for path, item in (doc.get("paths") or {}).items():
        item = _resolve(doc, item)
        for method in HTTP_METHODS:
            operation = item.get(method) if isinstance(item, Mapping) else None
            if isinstance(operation, Mapping):
                yield path, method.upper(), operation


def _error_responses(
    doc: Mapping[str, Any], operation: Mapping[str, Any]
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for status, response in (operation.get("responses") or {}).items():
        code = str(status).upper()
        if code[:1] in ("4", "5") or code == "DEFAULT":
            yield code, _resolve(doc, response)


@pytest.mark.spec(*DESCRIPTION)
def test_openapi_is_valid_3_1(openapi_doc: dict[str, Any]) -> None:
    version = openapi_doc.get("openapi")
    assert isinstance(version, str), f"openapi field missing: {version!r}"
    assert version.startswith("3.1."), f"openapi {version!r}, expected 3.1.x"
    validate(openapi_doc, cls=OpenAPIV31SpecValidator)


@pytest.mark.spec(*DESCRIPTION)
def test_openapi_describes_the_v2_endpoints(openapi_doc: dict[str, Any]) -> None:
    described = {(method, path) for path, method, _ in _operations(openapi_doc)}
    assert ("GET", "/v2/health") in described
    assert ("GET", "/v2/openapi.json") in described


@pytest.mark.spec(*DESCRIPTION, ENVELOPE)
def test_every_operation_lists_an_error_response(openapi_doc: dict[str, Any]) -> None:
    missing = [
        f"{method} {path}"
        for path, method, operation in _operations(openapi_doc)
        if path.startswith(ENVELOPE_PREFIXES) and not any(_error_responses(openapi_doc, operation))
    ]
    assert not missing, f"operations without any 4xx/5xx response: {missing}"


@pytest.mark.spec(*DESCRIPTION, ENVELOPE)
def test_error_responses_use_the_envelope(openapi_doc: dict[str, Any]) -> None:
    wrong: list[str] = []
    for path, method, operation in _operations(openapi_doc):
        if not path.startswith(ENVELOPE_PREFIXES):
            continue
        for status, response in _error_responses(openapi_doc, operation):
            content = response.get("content") or {}
            media = content.get("application/json")
            schema = media.get("schema") if isinstance(media, Mapping) else None
            if schema is None or not _is_envelope(openapi_doc, schema):
                wrong.append(f"{method} {path} {status}")
    assert not wrong, f"error responses not described with the error envelope: {wrong}"
