"""GET /_sim/, the page the banner links: JSON for a program, HTML for a browser, listing every
control operation of the route table, the OpenAPI documents (each answers) and the docs (each
exists in the repository)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from simulator.runtime.app import build_routes, create_app
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 3}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def test_the_index_lists_every_control_and_its_links_answer(client: Client) -> None:
    resp = await client.get("/_sim/")
    assert resp.status == 200
    index = (await resp.json())["data"]
    listed = {(op["method"], op["path"]) for op in index["controls"]}
    controls = {
        (op.method, op.path)
        for op in build_routes().for_document("sim")
        if op.path.startswith("/_sim/") and op.path != "/_sim/"
    }
    assert listed == controls
    assert ("PATCH", "/_sim/makers/{name}") in listed
    for link in index["openapi"]:
        path = link["href"].removeprefix(str(client.make_url("")).rstrip("/"))
        assert (await client.get(path)).status == 200, link
    for doc in index["docs"]:
        assert (REPO / doc["href"]).is_file(), doc


async def test_a_browser_gets_html_and_the_bare_path_answers_too(client: Client) -> None:
    resp = await client.get(
        "/_sim", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    )
    assert resp.status == 200
    assert resp.content_type == "text/html"
    page = await resp.text()
    assert "/_sim/openapi.json" in page
    assert "/_sim/makers" in page
    curl = await client.get("/_sim/", headers={"Accept": "*/*"})
    assert curl.content_type == "application/json"
