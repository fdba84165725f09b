"""OpenAPI 3.1 documents generated from the route table and the same pydantic models that parse
requests and render responses."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from rfqkit.local_guard import SAFE_METHODS
from simulator.api.http.routes import Document, ErrorStyle, Operation
from simulator.api.http.schemas import ErrorEnvelope, FeedError
from simulator.errors import Conflict, Forbidden, InvalidRequest, RateLimited, ServiceError

REF = "#/components/schemas/{model}"

TITLES: dict[Document, str] = {
    "v2": "RFQ swap API and fiat ramp (v2), webhook registry",
    "v1": "Closed v1 API",
    "sim": "rfqsim control API (simulator only)",
    "feed": "Public rates feed",
}

SECURITY_SCHEMES: dict[str, Any] = {
    "bearerKey": {"type": "http", "scheme": "bearer", "description": "API key"},
    "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "rfqClaim": {"type": "apiKey", "in": "header", "name": "X-Rfq-Claim"},
    "rampClaim": {"type": "apiKey", "in": "header", "name": "X-Ramp-Claim"},
}

_REQUEST_ID_HEADER = {
    "X-Request-Id": {"description": "Unique id of this request", "schema": {"type": "string"}}
}
ERROR_MODELS: dict[ErrorStyle, type[BaseModel]] = {"envelope": ErrorEnvelope, "feed": FeedError}


def _headers(op: Operation) -> dict[str, Any]:
    extra = {name: {"description": text, "schema": {"type": "string"}} for name, text in op.headers}
    return {**_REQUEST_ID_HEADER, **extra}


# Idempotency-Key is spec 3's ("Every POST that creates may send header Idempotency-Key"): it is
# described in the documents of the specs that name it. The shared webhook registry honours it
# for every caller, but the v2 document describes the registry as spec 1 does, without it.
IDEMPOTENCY_DOCUMENTS: frozenset[Document] = frozenset({"v1"})
IDEMPOTENCY_KEY_PARAMETER: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": (
        "Recommended. A retry with the same key and body replays the first response byte for "
        "byte (header Idempotent-Replayed: true) for 24 h by default; another body under the "
        "key is 400 (details.reason idempotency_key_reused); the same key while the first "
        "request is in flight is 409 (idempotency_key_in_flight). Scoped to the API key and "
        "the path; responses to requests that were not carried out (400, 401, 403, 413, 429, "
        "5xx) are not kept"
    ),
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": 255,
        "pattern": "^[!-~]([ -~]*[!-~])?$",
    },
}


def _data_schema(model: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["data"],
        "properties": {"data": {"$ref": REF.format(model=model.__name__)}},
    }


def _query_parameters(model: type[BaseModel], defs: dict[str, Any]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(ref_template=REF)
    defs.update(schema.pop("$defs", {}))
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": {k: v for k, v in prop.items() if k != "description"},
            **({"description": prop["description"]} if "description" in prop else {}),
        }
        for name, prop in schema.get("properties", {}).items()
    ]


def _path_parameters(path: str) -> list[dict[str, Any]]:
    names = [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]
    return [
        {"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names
    ]


def _retry_after(required: bool) -> dict[str, Any]:
    return {
        "Retry-After": {
            "description": "Whole seconds until the time window that refused the request ends"
            + ("" if required else "; absent on the outstanding-RFQ cap's 429"),
            "required": required,
            "schema": {"type": "string", "pattern": "^[1-9][0-9]*$"},
        }
    }


def _error_responses(op: Operation, errors: tuple[type[ServiceError], ...]) -> dict[str, Any]:
    if op.behind_backstop and RateLimited not in errors:
        errors = (*errors, RateLimited)  # the per-IP backstop answers before any handler
    if op.same_origin_writes and op.method not in SAFE_METHODS and Forbidden not in errors:
        errors = (*errors, Forbidden)  # another site's write is refused before any handler
    by_status: dict[int, list[str]] = {}
    for error in errors:
        by_status.setdefault(error.status, []).append(error.code)
    model = ERROR_MODELS[op.error_style].__name__
    responses: dict[str, Any] = {}
    for status, codes in sorted(by_status.items()):
        headers = _headers(op)
        if status == RateLimited.status:
            headers.update(_retry_after(op.retry_after_always))
        responses[str(status)] = {
            "description": "Error: " + ", ".join(sorted(set(codes))),
            "headers": headers,
            "content": {"application/json": {"schema": {"$ref": REF.format(model=model)}}},
        }
    return responses


def _operation(op: Operation, defs: dict[str, Any], document: Document) -> dict[str, Any]:
    idempotent = op.idempotent and document in IDEMPOTENCY_DOCUMENTS
    responses: dict[str, Any] = {}
    for status, model in sorted(op.responses.items()):
        description = "Success" if status < 500 else "Service unavailable"
        entry: dict[str, Any] = {"description": description, "headers": _headers(op)}
        if model is not None:
            schema = (
                _data_schema(model) if op.envelope else {"$ref": REF.format(model=model.__name__)}
            )
            entry["content"] = {"application/json": {"schema": schema}}
        responses[str(status)] = entry
    errors = op.errors
    if idempotent:  # a reused key is 400, a key in flight 409
        errors += tuple(e for e in (InvalidRequest, Conflict) if e not in errors)
    responses.update(_error_responses(op, errors))
    spec: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "tags": list(op.tags),
        "responses": responses,
    }
    parameters = _path_parameters(op.path)
    if op.query is not None:
        parameters += _query_parameters(op.query, defs)
    if idempotent:
        parameters.append(IDEMPOTENCY_KEY_PARAMETER)
    if parameters:
        spec["parameters"] = parameters
    if op.body is not None:
        spec["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": REF.format(model=op.body.__name__)}}
            },
        }
    if op.security:
        # "" is the empty requirement {}: the operation may also be called without any scheme.
        spec["security"] = [{name: []} if name else {} for name in op.security]
    return spec


def build_openapi(operations: list[Operation], document: Document, version: str) -> dict[str, Any]:
    models: set[type[BaseModel]] = {ERROR_MODELS[op.error_style] for op in operations}
    for op in operations:
        models.update(m for m in op.responses.values() if m is not None)
        if op.body is not None:
            models.add(op.body)
    keyed = [
        (m, "validation" if any(op.body is m for op in operations) else "serialization")
        for m in sorted(models, key=lambda m: m.__name__)
    ]
    _, schema = models_json_schema(keyed, ref_template=REF)  # type: ignore[arg-type]
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, defs, document)
    used_schemes = {name for op in operations for name in op.security if name}
    components: dict[str, Any] = {"schemas": dict(sorted(defs.items()))}
    if used_schemes:
        components["securitySchemes"] = {k: SECURITY_SCHEMES[k] for k in sorted(used_schemes)}
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLES[document], "version": version},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": components,
    }
