"""/_sim/makers on the app without chains (and so without a fleet): the handler parses, calls
the RFQ area's MakerControl and renders; its errors come out in the envelope."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from makers.config import BEHAVIOURS, UniformLatencyConfig
from simulator.adapters.rfq.fleet import MakerFleetControl
from simulator.errors import InvalidRequest
from simulator.runtime.app import create_app
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 3}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def test_nobody_online_and_no_fleet_yet(client: Client) -> None:
    resp = await client.get("/_sim/makers")
    assert resp.status == 200
    assert await resp.json() == {"data": {"online": [], "fleet": [], "reply_budget_ms": 0}}


async def test_changing_a_maker_the_fleet_does_not_have_is_404(client: Client) -> None:
    resp = await client.patch("/_sim/makers/maker-1", json={"behaviour": "silent"})
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == "not_found"


async def test_a_body_that_breaks_the_schema_is_400_before_the_fleet_is_asked(
    client: Client,
) -> None:
    resp = await client.patch("/_sim/makers/maker-1", json={"spread_bps": -1})
    assert resp.status == 400
    assert (await resp.json())["error"]["code"] == "invalid_request"


async def test_an_unknown_behaviour_is_the_envelope_with_issues_not_pydantic_text(
    client: Client,
) -> None:
    resp = await client.patch("/_sim/makers/alpha", json={"behaviour": "sleepy"})
    assert resp.status == 400
    body = await resp.json()
    assert body["error"]["code"] == "invalid_request"
    issues = body["error"]["details"]["issues"]
    assert [issue["field"] for issue in issues] == ["behaviour"]
    assert "pydantic" not in json.dumps(body)


async def test_the_sim_openapi_lists_the_behaviours(client: Client) -> None:
    resp = await client.get("/_sim/openapi.json")
    document = await resp.json()
    change = document["components"]["schemas"]["MakerChange"]["properties"]["behaviour"]
    assert json.dumps(change).count('"flaky"') == 1
    assert set(BEHAVIOURS) <= set(json.dumps(change).replace('"', " ").split())


async def test_a_combination_the_maker_refuses_is_the_envelope_with_issues() -> None:
    class RefusingMaker:
        async def reconfigure(self, **changes: object) -> None:
            UniformLatencyConfig.model_validate({"lo_ms": 9, "hi_ms": 1})

    class Fleet:
        makers = {"alpha": RefusingMaker()}

    control = MakerFleetControl(lambda: Fleet())  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidRequest) as caught:
        await control.reconfigure("alpha", {"latency": {}})
    details = caught.value.details or {}
    assert details["reason"] == "invalid_maker_config"
    assert details["issues"][0]["type"] == "value_error"
    assert "pydantic.dev" not in json.dumps(details)


async def test_info_names_the_maker_wallets_as_the_fleet_and_the_log_do(client: Client) -> None:
    info = (await (await client.get("/_sim/info")).json())["data"]
    wallets = info["maker_wallets"]
    assert [(w["label"], w["name"]) for w in wallets] == [
        ("maker-0", "alpha"),
        ("maker-1", "bravo"),
        ("maker-2", "charlie"),
        ("maker-3", "delta"),
    ]
    assert info["funding"]["token_whole_units"] == 1_000_000
