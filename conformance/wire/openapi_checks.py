"""The v2 description (``GET /v2/openapi.json``) checked as a document: its operations
(:func:`operations`), every ``/v1``, ``/v2`` operation listing a 4xx/5xx response
(:func:`operations_without_error_response`) and each such response described with the error
envelope (:func:`error_responses_without_envelope`). Local ``$ref`` pointers are followed
(:func:`resolve`). The suite's test_openapi.py runs them on the target's document, and the
watching proxy on the document a client fetched through it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from conformance.wire.wording import shown

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# Paths whose errors must use the v2 envelope (the rates feed has its own {error: string}).
ENVELOPE_PREFIXES = ("/v1/", "/v2/")


def resolve(doc: Mapping[str, Any], node: Any) -> Any:
    """Follow local ``$ref`` pointers (``#/components/...``) until a non-ref node."""
    seen: set[str] = set()
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        assert ref.startswith("#/"), f"non-local $ref {shown(ref)}"
        assert ref not in seen, f"$ref cycle at {shown(ref)}"
        seen.add(ref)
        target: Any = doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            assert isinstance(target, Mapping), f"bad $ref {shown(ref)}"
            assert part in target, f"dangling $ref {shown(ref)}"
            target = target[part]
        node = target
    return node


def is_envelope(doc: Mapping[str, Any], schema: Any) -> bool:
    """``{error: {code, message, request_id, ...}}`` with error and its three members required."""
    schema = resolve(doc, schema)
    if not isinstance(schema, Mapping):
        return False
    for combinator in ("allOf", "oneOf", "anyOf"):
        parts = schema.get(combinator)
        if isinstance(parts, list) and parts:
            checks = [is_envelope(doc, part) for part in parts]
            return any(checks) if combinator == "allOf" else all(checks)
    properties = schema.get("properties") or {}
    if "error" not in properties or "error" not in (schema.get("required") or []):
        return False
    error = resolve(doc, properties["error"])
    if not isinstance(error, Mapping):
        return False
    members = set((error.get("properties") or {}).keys())
    required = set(error.get("required") or [])
    wanted = {"code", "message", "request_id"}
    return wanted <= members and wanted <= required


def operations(doc: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    for path, item in (doc.get("paths") or {}).items():
        item = resolve(doc, item)
        for method in HTTP_METHODS:
            operation = item.get(method) if isinstance(item, Mapping) else None
            if isinstance(operation, Mapping):
                yield path, method.upper(), operation


def error_responses(
    doc: Mapping[str, Any], operation: Mapping[str, Any]
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for status, response in (operation.get("responses") or {}).items():
        code = str(status).upper()
        if code[:1] in ("4", "5") or code == "DEFAULT":
            yield code, resolve(doc, response)


def operations_without_error_response(doc: Mapping[str, Any]) -> list[str]:
    """``METHOD path`` of each /v1, /v2 operation that lists no 4xx/5xx response."""
    return [
        f"{method} {path}"
        for path, method, operation in operations(doc)
        if path.startswith(ENVELOPE_PREFIXES) and not any(error_responses(doc, operation))
    ]


def error_responses_without_envelope(doc: Mapping[str, Any]) -> list[str]:
    """``METHOD path status`` of each /v1, /v2 error response not described with the error
    envelope as its application/json schema."""
    wrong: list[str] = []
    for path, method, operation in operations(doc):
        if not path.startswith(ENVELOPE_PREFIXES):
            continue
        for status, response in error_responses(doc, operation):
            content = response.get("content") or {}
            media = content.get("application/json")
            schema = media.get("schema") if isinstance(media, Mapping) else None
            if schema is None or not is_envelope(doc, schema):
                wrong.append(f"{method} {path} {status}")
    return wrong
