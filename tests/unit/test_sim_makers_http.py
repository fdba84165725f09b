"""/_sim/makers on the app without chains (and so without a fleet): the handler parses, calls
the RFQ area's MakerControl and renders; its errors come out in the envelope."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

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
    assert await resp.json() == {"data": {"online": [], "fleet": []}}


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
