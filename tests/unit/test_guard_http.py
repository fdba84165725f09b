"""The local guard on the simulator's app without chains, over real loopback HTTP: a foreign Host
name is refused everywhere in the error shape of the path, loopback names and listed names are
answered (and are what `api_url` echoes), control writes another site sent are refused and
change nothing, the public API's are not judged. The browser replays are in
tests/integration/test_local_guard_browser.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from rfqkit.local_guard import SAFE_METHODS
from rfqsim.cli import build_parser
from simulator import __version__
from simulator.api.http.openapi import build_openapi
from simulator.runtime.app import build_routes, create_app
from simulator.serve_args import settings_from_args
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    settings = load_settings(
        overrides={"seed": 3},
        environ={"RFQSIM_API__ALLOWED_HOSTS": '["box.lan", ".corp.example"]'},
    )
    app = create_app(settings, start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


def _port(client: Client) -> int:
    port = client.server.port
    assert port is not None
    return port


async def _refusal(resp: ClientResponse, reason: str) -> dict[str, Any]:
    assert resp.status == 403
    body = await resp.json()
    error = body["error"]
    assert error["code"] == "forbidden"
    assert error["request_id"] == resp.headers["X-Request-Id"]
    assert error["details"]["reason"] == reason
    return dict(error)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/_sim/info"),
        ("GET", "/_sim/keys"),
        ("POST", "/_sim/keys"),
        ("GET", "/_sim/console"),
        ("GET", "/v2/health"),
        ("GET", "/no/such/path"),
    ],
)
async def test_a_foreign_host_is_refused_on_every_path(
    client: Client, method: str, path: str
) -> None:
    resp = await client.request(
        method,
        path,
        headers={"Host": f"attacker.example:{_port(client)}"},
        json={"name": "stolen", "scopes": ["trades:write"]} if method == "POST" else None,
    )
    error = await _refusal(resp, "host_not_allowed")
    assert error["details"]["host"] == "attacker.example"
    assert "--allowed-host attacker.example" in error["message"]


async def test_a_key_asked_for_through_a_foreign_host_is_not_created(client: Client) -> None:
    before = await (await client.get("/_sim/keys")).json()
    resp = await client.post(
        "/_sim/keys",
        headers={"Host": "attacker.example"},
        json={"name": "stolen", "scopes": ["trades:write"]},
    )
    await _refusal(resp, "host_not_allowed")
    after = await (await client.get("/_sim/keys")).json()
    assert after == before


async def test_the_feed_refuses_a_foreign_host_in_its_own_error_shape(client: Client) -> None:
    resp = await client.get("/tickers", headers={"Host": "attacker.example"})
    assert resp.status == 403
    body = await resp.json()
    assert isinstance(body["error"], str)
    assert "attacker.example" in body["error"]


@pytest.mark.parametrize(
    "name", ["localhost", "127.0.0.1", "[::1]", "127.0.0.2", "box.lan", "a.corp.example"]
)
async def test_loopback_and_listed_names_are_answered_and_echoed_in_api_url(
    client: Client, name: str
) -> None:
    host = f"{name}:{_port(client)}"
    resp = await client.get("/_sim/info", headers={"Host": host})
    assert resp.status == 200
    info = (await resp.json())["data"]
    assert info["api_url"] == f"http://{host}"
    assert info["console_url"] == f"http://{host}/_sim/console"


async def _faults(client: Client) -> dict[str, Any]:
    return dict((await (await client.get("/_sim/faults")).json())["data"])


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Origin": "http://attacker.example"}, "foreign_origin"),
        ({"Origin": "null"}, "foreign_origin"),
        ({"Sec-Fetch-Site": "cross-site"}, "sec_fetch_site_cross_site"),
        ({"Sec-Fetch-Site": "same-site"}, "sec_fetch_site_same_site"),
    ],
)
async def test_a_control_write_from_another_site_is_refused_and_changes_nothing(
    client: Client, headers: dict[str, str], reason: str
) -> None:
    before = await _faults(client)
    resp = await client.post("/_sim/faults", json={"venue_paused": True}, headers=headers)
    await _refusal(resp, reason)
    resp = await client.delete("/_sim/faults", headers=headers)
    await _refusal(resp, reason)
    assert await _faults(client) == before
    assert before["venue_paused"] is False


async def test_a_control_write_from_another_port_of_loopback_is_another_origin(
    client: Client,
) -> None:
    other = f"http://127.0.0.1:{_port(client) + 1}"
    resp = await client.post("/_sim/faults", json={"venue_paused": True}, headers={"Origin": other})
    await _refusal(resp, "foreign_origin")


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl and test clients
        {"Sec-Fetch-Site": "same-origin", "Origin": "{own}"},  # the console
        {"Sec-Fetch-Site": "none"},
    ],
)
async def test_a_control_write_from_the_servers_own_page_or_no_page_is_done(
    client: Client, headers: dict[str, str]
) -> None:
    own = f"http://127.0.0.1:{_port(client)}"
    sent = {name: value.format(own=own) for name, value in headers.items()}
    resp = await client.post("/_sim/faults", json={"venue_paused": True}, headers=sent)
    assert resp.status == 200, await resp.text()
    assert (await _faults(client))["venue_paused"] is True


async def test_reads_of_the_control_api_from_another_site_are_not_judged(client: Client) -> None:
    # A page on another origin cannot read the answer (no CORS on /_sim); refusing would only
    # break links into the console.
    resp = await client.get(
        "/_sim/faults",
        headers={"Origin": "http://attacker.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert resp.status == 200


async def test_the_public_api_is_not_judged_by_origin(client: Client) -> None:
    """A wallet page on another origin calls /v2 (decisions SEC3): what it gets is the API's
    own answer (here: the body is incomplete), never the guard's refusal."""
    resp = await client.post(
        "/v2/rfq/request",
        json={},
        headers={"Origin": "https://wallet.example", "Sec-Fetch-Site": "cross-site"},
    )
    body = await resp.json()
    assert resp.status == 400, body
    assert body["error"]["code"] == "invalid_request"


def test_every_control_write_lists_403_in_the_control_apis_document() -> None:
    ops = build_routes().for_document("sim")
    document = build_openapi(ops, "sim", __version__)
    writes = 0
    for op in ops:
        responses = document["paths"][op.path][op.method.lower()]["responses"]
        if op.same_origin_writes and op.method not in SAFE_METHODS:
            writes += 1
            assert "403" in responses, op.operation_id
    assert writes > 20


def test_serve_flags_list_hosts_and_open_the_chains_to_pages() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["serve", "--allowed-host", "box.lan", "--allowed-host", ".corp.example", "--rpc-cors"]
    )
    settings = settings_from_args(args)
    assert settings.api.allowed_hosts == ["box.lan", ".corp.example"]
    assert settings.rpc_cors is True
    defaults = settings_from_args(parser.parse_args(["serve"]))
    assert defaults.api.allowed_hosts == []
    assert defaults.rpc_cors is False
