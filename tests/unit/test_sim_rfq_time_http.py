"""/_sim/rfqs/{rfq_id}/expire, /give-up and /release on the app without chains: described in
/_sim/openapi.json from the route table (the RFQ record, 404, 409), and an unknown id is the
envelope's 404. Their outcomes run against a real simulator in
tests/integration/test_time_controls.py. Also GET /_sim/rfqs/{rfq_id}: a selection's losers say
how far each usable quote's rate fell short of the winner's (`vs_winner_bps`), null on a step
kept by an older version."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from simulator.api.http.appkeys import TIMELINES
from simulator.runtime.app import create_app
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]
CONTROLS = {"expire": "409", "give-up": "502", "release": "409"}
WINNER, LOSER, OLD = ("0x" + c * 40 for c in "abc")


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


async def test_losers_say_how_far_behind_the_winner_they_were(client: Client) -> None:
    rfqs = client.app[TIMELINES]["rfqs"]
    rfqs.start("rfq_1", "soliciting", {"makers": [WINNER, LOSER, OLD], "winners": [WINNER]})
    rfqs.step("rfq_1", "selected", "single", [WINNER], [[LOSER, "worse_price", 6.01], [OLD, "x"]])
    resp = await client.get("/_sim/rfqs/rfq_1")
    assert resp.status == 200
    (selected,) = (await resp.json())["data"]["steps"]
    assert selected["losers"] == [
        {"wallet": LOSER, "name": None, "why": "worse_price", "vs_winner_bps": 6.01},
        {"wallet": OLD, "name": None, "why": "x", "vs_winner_bps": None},
    ]
