"""The proxy's own Host check over real loopback HTTP, in front of a scripted upstream: a foreign
Host is refused by the proxy (the Host it forwards names the upstream, so the upstream's check
could not see it) and never reaches the upstream; a page the proxy served keeps its control
requests same-origin upstream, another origin's stays another origin's."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqsim.proxy.running import Options, Proxy

Seen = list[dict[str, str]]


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[TestServer, Seen]]:
    seen: Seen = []

    async def echo(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.json_response({"data": {"ok": True}})

    app = web.Application()
    app.router.add_route("*", "/_sim/faults", echo)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield server, seen
    finally:
        await server.close()


@pytest.fixture
async def proxy(
    upstream: tuple[TestServer, Seen], tmp_path: Path
) -> AsyncIterator[tuple[Proxy, Seen]]:
    server, seen = upstream
    options = Options(
        str(server.make_url("")).rstrip("/"),
        "127.0.0.1",
        0,
        tmp_path / "report",
        fail_on_violation=False,
        header=True,
        allowed_hosts=("proxy.lan",),
    )
    running = Proxy(options, io.StringIO())
    await running.start()
    try:
        yield running, seen
    finally:
        await running.stop()


async def _post(url: str, headers: dict[str, str]) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + "/_sim/faults", json={}, headers=headers) as answer,
    ):
        return answer.status, await answer.json()


async def test_a_foreign_host_is_refused_by_the_proxy_and_never_forwarded(
    proxy: tuple[Proxy, Seen],
) -> None:
    running, seen = proxy
    port = running.url.rsplit(":", 1)[1]
    status, body = await _post(running.url, {"Host": f"attacker.example:{port}"})
    assert status == 403
    assert body["error"]["code"] == "forbidden"
    assert body["error"]["details"] == {"reason": "host_not_allowed", "host": "attacker.example"}
    assert body["error"]["request_id"].startswith("req_")
    assert seen == []


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", "proxy.lan"])
async def test_loopback_and_listed_names_are_forwarded_naming_the_upstream(
    proxy: tuple[Proxy, Seen], upstream: tuple[TestServer, Seen], name: str
) -> None:
    running, seen = proxy
    server, _ = upstream
    port = running.url.rsplit(":", 1)[1]
    status, _ = await _post(running.url, {"Host": f"{name}:{port}"})
    assert status == 200
    assert seen[-1]["Host"] == f"127.0.0.1:{server.port}"


async def test_a_page_the_proxy_served_stays_same_origin_upstream(
    proxy: tuple[Proxy, Seen], upstream: tuple[TestServer, Seen]
) -> None:
    running, seen = proxy
    server, _ = upstream
    status, _ = await _post(running.url, {"Origin": running.url, "Sec-Fetch-Site": "same-origin"})
    assert status == 200
    assert seen[-1]["Origin"] == f"http://127.0.0.1:{server.port}"
    assert seen[-1]["Sec-Fetch-Site"] == "same-origin"
    await _post(running.url, {"Origin": "http://attacker.example"})
    assert seen[-1]["Origin"] == "http://attacker.example"
