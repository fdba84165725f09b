"""The per-IP backstop and the OpenAPI documents agree: every operation the backstop counts lists
429 with Retry-After (an independent schemathesis run met an undocumented 429 on GET
/v2/health); health checks and the OpenAPI documents are outside it (docs/decisions.md C10), and
so list no 429."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from simulator import __version__
from simulator.api.http.openapi import build_openapi
from simulator.runtime.app import build_routes, create_app
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]
EXEMPT = {"v1Health", "v2Health", "v2OpenApi", "v1OpenApi", "feedOpenApi", "simOpenApi"}
# Outside the backstop but with a 429 of their own: the live stream's reader cap.
OWN_429 = {"simStream"}


def _operations(document: Any) -> dict[str, dict[str, Any]]:
    return {
        op["operationId"]: op for methods in document["paths"].values() for op in methods.values()
    }


@pytest.mark.parametrize("name", ["v2", "v1", "sim", "feed"])
def test_every_operation_behind_the_backstop_lists_429_with_retry_after(name: str) -> None:
    routes = build_routes()
    ops = routes.for_document(name)  # type: ignore[arg-type]
    document = _operations(build_openapi(ops, name, __version__))  # type: ignore[arg-type]
    for op in ops:
        responses = document[op.operation_id]["responses"]
        if not op.behind_backstop:
            assert ("429" in responses) is (op.operation_id in OWN_429), op.operation_id
            continue
        assert "429" in responses, f"{op.operation_id} does not list 429"
        retry_after = responses["429"]["headers"]["Retry-After"]
        assert retry_after["schema"] == {"type": "string", "pattern": "^[1-9][0-9]*$"}
        # Only the firm request can also meet the outstanding-RFQ cap, whose 429 has none.
        assert retry_after["required"] is (op.operation_id != "rfqRequest"), op.operation_id
        assert "X-Request-Id" in responses["429"]["headers"]


def test_the_exempt_operations_are_health_openapi_and_the_control_api() -> None:
    exempt = {op.operation_id for op in build_routes().operations if not op.behind_backstop}
    public = {op for op in exempt if op in EXEMPT}
    assert public == EXEMPT
    others = exempt - EXEMPT
    assert others  # /_sim/* and /_provider/*
    assert all(
        op.document == "sim" for op in build_routes().operations if op.operation_id in others
    )


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    settings = load_settings(overrides={"limits": {"ip_backstop_per_minute": 2}})
    app = create_app(settings, start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def test_over_the_backstop_health_and_openapi_still_answer(client: Client) -> None:
    for _ in range(2):
        assert (await client.get("/v2/nope")).status == 404  # counted: behind the backstop
    for path in ("/v2/rfq/levels?chainId=97", "/v2/nope", "/v2/ramp/providers"):
        resp = await client.get(path)
        assert resp.status == 429, path
        body = await resp.json()
        assert body["error"]["code"] == "rate_limited"
        assert body["error"]["details"]["reason"] == "rate_limit"
        assert int(resp.headers["Retry-After"]) >= 1
        assert "X-RateLimit-Limit" not in resp.headers
        assert resp.headers["X-Request-Id"] == body["error"]["request_id"]
    for path in (
        "/v2/health",
        "/v1/health",
        "/v2/openapi.json",
        "/v1/openapi.json",
        "/feed/openapi.json",
        "/_sim/openapi.json",
    ):
        for _ in range(3):
            resp = await client.get(path)
            assert resp.status == 200, path
            assert "Retry-After" not in resp.headers
