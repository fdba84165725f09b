"""The HTTP conventions of every response, checked on the app without chains over real loopback
HTTP: request ids, the error envelope, 404/405/413, JSON parsing and the OpenAPI document."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from openapi_spec_validator import validate

from simulator.runtime.app import create_app
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 3}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def _error(resp: ClientResponse) -> dict[str, Any]:
    body = await resp.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert error["request_id"] == resp.headers["X-Request-Id"]
    assert isinstance(error["message"], str)
    assert error["message"]
    return dict(error)


async def test_health_is_wrapped_in_data_with_request_id(
    client: Client,
) -> None:
    resp = await client.get("/v2/health")
    assert resp.status == 200
    assert resp.headers["X-Request-Id"].startswith("req_")
    body = await resp.json()
    assert body["data"]["status"] == "ok"
    assert body["data"]["time"].endswith("Z")


async def test_unknown_path_is_404_envelope(client: Client) -> None:
    resp = await client.get("/v2/nope")
    assert resp.status == 404
    assert (await _error(resp))["code"] == "not_found"


async def test_wrong_method_is_405_with_allow(client: Client) -> None:
    resp = await client.delete("/v2/health")
    assert resp.status == 405
    assert "GET" in resp.headers["Allow"]
    assert (await _error(resp))["code"] == "method_not_allowed"


async def test_malformed_json_is_400_with_issues(client: Client) -> None:
    resp = await client.post(
        "/_sim/clock/advance", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert resp.status == 400
    error = await _error(resp)
    assert error["code"] == "invalid_request"
    issues = error["details"]["issues"]
    assert issues[0]["type"] == "json_invalid"


async def test_schema_failure_names_the_field(client: Client) -> None:
    resp = await client.post("/_sim/clock/advance", json={"seconds": -1})
    assert resp.status == 400
    error = await _error(resp)
    assert [i["field"] for i in error["details"]["issues"]] == ["seconds"]


async def test_unknown_field_is_refused(client: Client) -> None:
    resp = await client.post("/_sim/clock/advance", json={"seconds": 1, "extra": 2})
    assert resp.status == 400
    error = await _error(resp)
    assert [i["field"] for i in error["details"]["issues"]] == ["extra"]


async def test_wrong_content_type_is_400(client: Client) -> None:
    resp = await client.post("/_sim/clock/advance", data=b'{"seconds": 1}')
    assert resp.status == 400
    error = await _error(resp)
    assert error["details"] == {
        "reason": "unsupported_media_type",
        "contentType": "application/octet-stream",
    }


async def test_oversize_body_is_413_envelope(client: Client) -> None:
    resp = await client.post(
        "/_sim/clock/advance",
        data=io.BytesIO(b"{" + b" " * (2 << 20) + b"}"),
        headers={"Content-Type": "application/json"},
    )
    assert resp.status == 413
    assert (await _error(resp))["code"] == "payload_too_large"


async def test_advance_without_chains_moves_the_clock(client: Client) -> None:
    before = (await (await client.get("/_sim/clock")).json())["data"]
    resp = await client.post("/_sim/clock/advance", json={"seconds": 60})
    assert resp.status == 200
    after = (await resp.json())["data"]
    assert after["offset_seconds"] == before["offset_seconds"] + 60


async def test_request_ids_are_unique(client: Client) -> None:
    ids = {(await client.get("/v1/health")).headers["X-Request-Id"] for _ in range(20)}
    assert len(ids) == 20


@pytest.mark.parametrize("path", ["/v2/openapi.json", "/_sim/openapi.json"])
async def test_openapi_documents_validate(client: Client, path: str) -> None:
    resp = await client.get(path)
    assert resp.status == 200
    document = await resp.json()
    validate(document)
    assert document["openapi"] == "3.1.0"
    for item in document["paths"].values():
        for operation in item.values():
            errors = [s for s in operation["responses"] if s.startswith(("4", "5"))]
            assert errors, operation["operationId"]
            for status in errors:
                schema = operation["responses"][status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}


async def test_every_response_says_how_long_the_simulator_took(client: Client) -> None:
    # Server-Timing `sim` (docs/decisions.md F23) on answers and errors alike; `makers` only
    # where an auction waited for makers (firm requests, which need chains).
    for resp in (await client.get("/v2/health"), await client.get("/v2/nope")):
        (entry,) = resp.headers["Server-Timing"].split(", ")
        name, duration = entry.split(";")
        assert name == "sim"
        assert duration.startswith("dur=")
        assert 0 <= float(duration[4:]) < 60_000
