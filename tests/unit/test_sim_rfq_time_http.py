"""/_sim/rfqs/{rfq_id}/expire, /give-up and /release on the app without chains: described in
/_sim/openapi.json from the route table (the RFQ record, 404, 409), and an unknown id is the
envelope's 404. Their outcomes run against a real simulator in
tests/integration/test_time_controls.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from simulator.runtime.app import create_app
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]
CONTROLS = {"expire": "409", "give-up": "502", "release": "409"}


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 3}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def test_each_control_is_described_in_the_sim_document(client: Client) -> None:
    document = await (await client.get("/_sim/openapi.json")).json()
    record = document["components"]["schemas"]["RfqRecord"]
    assert {"rfqId", "status", "expiresAt", "failReason"} <= set(record["properties"])
    for action, distinct in CONTROLS.items():
        operation = document["paths"][f"/_sim/rfqs/{{rfq_id}}/{action}"]["post"]
        assert {"200", "404", distinct} <= set(operation["responses"]), action
        ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok["properties"]["data"] == {"$ref": "#/components/schemas/RfqRecord"}, ok
        parameters = {(p["name"], p["in"]) for p in operation["parameters"]}
        assert ("rfq_id", "path") in parameters


@pytest.mark.parametrize("action", sorted(CONTROLS))
async def test_an_unknown_rfq_is_404_in_the_envelope(client: Client, action: str) -> None:
    resp = await client.post(f"/_sim/rfqs/rfq_0123456789abcdef/{action}")
    assert resp.status == 404
    error = (await resp.json())["error"]
    assert (error["code"], error["details"]) == ("not_found", {"reason": "unknown_rfq"})
    assert error["request_id"] == resp.headers["X-Request-Id"]
