"""GET /_sim/, the page the banner links: JSON for a program, HTML for a browser, listing every
control operation of the route table, the OpenAPI documents (each answers) and the docs (each
exists in the repository)."""

from __future__ import annotations

import re
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


BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


async def test_a_browser_is_sent_to_the_console_and_json_clients_keep_the_index(
    client: Client,
) -> None:
    for path in ("/", "/_sim", "/_sim/"):
        resp = await client.get(path, headers=BROWSER, allow_redirects=False)
        assert resp.status == 302, path
        assert resp.headers["Location"] == "/_sim/console"
        curl = await client.get(path, headers={"Accept": "*/*"})
        assert curl.status == 200
        assert curl.content_type == "application/json"
    page = await client.get("/_sim/index.html", headers=BROWSER)
    assert page.status == 200
    assert page.content_type == "text/html"
    text = await page.text()
    assert "/_sim/openapi.json" in text
    assert "/_sim/makers" in text


async def test_the_console_and_its_files_are_served_from_this_origin_only(client: Client) -> None:
    resp = await client.get("/_sim/console", headers=BROWSER)
    assert resp.status == 200
    assert resp.content_type == "text/html"
    policy = resp.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "default-src 'none'" in policy
    page = await resp.text()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', page)
    assert scripts
    assert all(src.startswith("/_sim/console/") for src in scripts)
    assert "<script>" not in page  # no inline script: the policy would refuse it anyway
    for src in scripts:
        asset = await client.get(src)
        assert asset.status == 200
        assert asset.content_type == "text/javascript"
    for name in ("../settings.py", "nope.js", "index.html"):
        missing = await client.get(f"/_sim/console/{name}")
        assert missing.status == 404, name
