"""Answers against the service's own description: a documented status with a body its schema
accepts passes (fields the spec does not name included: `additionalProperties: false` is not
held against it); a body the schema refuses, or a status the operation does not list, is found
under the operation's endpoint rule."""

from __future__ import annotations

from typing import Any

from rfqsim.proxy.documents import Documents
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.spec import operation_of
from tests.unit.proxy.exchanges import exchange

DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "paths": {
        "/v2/health": {
            "get": {
                "responses": {
                    "200": {"$ref": "#/components/responses/Health"},
                    "4XX": {"description": "an error"},
                }
            }
        }
    },
    "components": {
        "responses": {
            "Health": {
                "description": "ok",
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Wrapped"}}
                },
            }
        },
        "schemas": {
            "Wrapped": {
                "type": "object",
                "required": ["data"],
                "additionalProperties": False,
                "properties": {"data": {"$ref": "#/components/schemas/Health"}},
            },
            "Health": {
                "type": "object",
                "required": ["status"],
                "properties": {"status": {"enum": ["ok", "degraded"]}},
            },
        },
    },
}
RULE = "rfq/endpoints/get-v2-health"


def _found(status: int, body: Any) -> list[str]:
    documents = Documents()
    documents.load("/v2/openapi.json", DOCUMENT)
    operation = operation_of("GET", "/v2/health")
    assert operation is not None
    inspection = Inspection(exchange("GET", "/v2/health", status=status, body=body))
    documents.check(inspection, operation)
    assert RULE in inspection.exercised
    return [f"{f.rule}: {f.message}" for f in inspection.found]


def test_a_documented_answer_passes_with_fields_the_spec_does_not_name() -> None:
    assert _found(200, {"data": {"status": "ok"}, "servedBy": "edge-1"}) == []
    assert _found(404, {"error": {"code": "not_found"}}) == []  # 4XX, no schema given


def test_a_body_the_schema_refuses_and_an_undocumented_status_are_found() -> None:
    (wrong,) = _found(200, {"data": {"status": "OK"}})
    assert wrong.startswith(f"{RULE}: the answer does not match the documented 200 schema")
    assert "data/status" in wrong
    (undocumented,) = _found(503, {"error": {"code": "venue_unavailable"}})
    assert undocumented.startswith(f"{RULE}: HTTP 503 is not a documented answer")


def _webhooks_document(*statuses: str) -> dict[str, Any]:
    responses = {status: {"description": status} for status in statuses}
    return {"openapi": "3.1.0", "paths": {"/v1/webhooks": {"post": {"responses": responses}}}}


def test_an_answer_any_document_of_the_operation_gives_is_documented() -> None:
    """/v1/webhooks is in spec 1's document and in spec 3's, which adds the Idempotency-Key's
    409 for a key in flight: documented; a status neither gives is not."""
    documents = Documents()
    documents.load("/v2/openapi.json", _webhooks_document("201", "400"))
    documents.load("/v1/openapi.json", _webhooks_document("201", "400", "409"))
    operation = operation_of("POST", "/v1/webhooks")
    assert operation is not None

    def found(status: int) -> list[str]:
        answer = {"error": {"code": "conflict"}}
        inspection = Inspection(exchange("POST", "/v1/webhooks", status=status, body=answer))
        documents.check(inspection, operation)
        return [f.message for f in inspection.found]

    assert found(409) == []
    assert found(410) == [
        "HTTP 410 is not a documented answer of POST /v1/webhooks (documented: 201, 400, 409)"
    ]
