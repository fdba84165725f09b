"""The attacks of a web page on rfqsim's local servers, replayed in a real browser (Debian's
chromium, driven by Playwright) against a real `rfqsim serve` (its Anvil chains, its provider
sandbox) and a real `rfqsim proxy`: each is refused and the state read back is unchanged
(docs/security.md).

- DNS rebinding: chromium resolves `attacker.example` to 127.0.0.1 (`--host-resolver-rules`),
  the state after a rebinding: a page of `attacker.example:<the server's port>` is same-origin
  with the server and may read every answer, but every request carries
  `Host: attacker.example`.
- Cross-site writes: a page on another origin (served by a second little aiohttp server)
  submits an empty form or a `no-cors` fetch to the control API.
- Chains: the same page calls Anvil's `anvil_setBalance`.

Each refusal is checked next to the same script succeeding where it must (a page of the
server's own origin, an Anvil with CORS open), so a refusal is the guard's, not a broken
script's."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from aiohttp import web
from playwright.sync_api import BrowserContext, Page

from conformance.wire.proxy_process import ProxyProcess
from rfqkit.anvil import start_anvil
from rfqsim.pytest_plugin import RfqSim
from tests.integration.browser import chromium, chromium_path
from tests.integration.serve_process import RFQSIM, serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("local-guard-browser")]

HOSTILE = "attacker.example"
RESOLVE_TO_LOOPBACK = f"--host-resolver-rules=MAP {HOSTILE} 127.0.0.1"
ATTACKER_PAGE = "<!doctype html><html><head><title>cute cats</title></head><body></body></html>"
WAIT_MS = 30_000

# The page's scripts: what the probes ran.
READ = """async ([url, init]) => {
  try {
    const answer = await fetch(url, init);
    return {status: answer.status, body: await answer.text()};
  } catch (error) {
    return {error: String(error)};
  }
}"""
FORM_POST = """(action) => {
  const sink = document.createElement('iframe');
  sink.name = 'sink';
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = action;
  form.target = 'sink';
  document.body.append(sink, form);
  form.submit();
}"""


@contextmanager
def page_server() -> Iterator[int]:
    """The attacker's own little web server on another loopback port: serves its page."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="attacker-pages", daemon=True)
    thread.start()

    async def page(_: web.Request) -> web.Response:
        return web.Response(text=ATTACKER_PAGE, content_type="text/html")

    async def start() -> web.AppRunner:
        app = web.Application()
        app.router.add_get("/", page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return runner

    runner = asyncio.run_coroutine_threadsafe(start(), loop).result(15)
    try:
        yield int(runner.addresses[0][1])
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(15)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=15)
        loop.close()


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RfqSim]:
    chromium_path()  # skip (or fail in CI) before starting anything
    with serve(tmp_path_factory.mktemp("guard")) as served:
        yield RfqSim(served.api_url, served.info)


@pytest.fixture(scope="module")
def attacker_port() -> Iterator[int]:
    with page_server() as port:
        yield port


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, sim: RfqSim) -> Iterator[BrowserContext]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    with chromium(profile, (RESOLVE_TO_LOOPBACK,)) as context:
        yield context


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    opened = browser.new_page()
    opened.set_default_timeout(WAIT_MS)
    yield opened
    opened.close()


def _port(url: str) -> int:
    return int(url.rstrip("/").rsplit(":", 1)[1])


def rebound_page(page: Page, port: int, host: str = HOSTILE) -> Page:
    """A page of `http://<host>:<port>`, the origin of the server under attack once the name
    points at it. Its document is whatever the server answers there (the attacker's own page
    was loaded before the name moved; a document served from anywhere but this address would
    be a public page, which chromium's Private Network Access already keeps from loopback:
    other browsers do not, and the server must not rely on it)."""
    page.goto(f"http://{host}:{port}/cats.html")
    return page


def read(page: Page, url: str, init: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = page.evaluate(READ, [url, init or {}])
    assert isinstance(answer, dict)
    return answer


def post_json(body: Any) -> dict[str, Any]:
    return {
        "method": "POST",
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
    }


def _refused_host(answer: dict[str, Any]) -> None:
    assert answer.get("status") == 403, answer
    error = json.loads(answer["body"])["error"]
    assert error["details"] == {"reason": "host_not_allowed", "host": HOSTILE}


# -- DNS rebinding ---------------------------------------------------------------------------


def test_a_rebound_page_reads_no_key_and_creates_none(page: Page, sim: RfqSim) -> None:
    before = sim.call("GET", "/_sim/keys")["keys"]
    rebound_page(page, _port(sim.base_url))
    info = read(page, "/_sim/info")
    _refused_host(info)
    assert sim.demo_wallets[0]["private_key"] not in info["body"]
    created = read(
        page, "/_sim/keys", post_json({"environment": "live", "scopes": ["trades:write"]})
    )
    _refused_host(created)
    assert "tx_live_" not in created["body"]
    _refused_host(read(page, "/_sim/ramp"))
    _refused_host(read(page, "/_sim/console"))
    assert sim.call("GET", "/_sim/keys")["keys"] == before


def test_the_same_script_on_the_servers_own_origin_reads_the_keys(page: Page, sim: RfqSim) -> None:
    """The control: what the rebound page was refused, a page of the simulator's own origin
    (a name that cannot be rebound) gets."""
    rebound_page(page, _port(sim.base_url), host="127.0.0.1")
    info = read(page, "/_sim/info")
    assert info.get("status") == 200, info
    assert sim.demo_wallets[0]["private_key"] in info["body"]
    assert json.loads(info["body"])["data"]["api_url"] == sim.base_url


def test_a_rebound_page_cannot_reach_the_provider_sandbox(page: Page, sim: RfqSim) -> None:
    provider = str(sim.info["provider_url"])
    rebound_page(page, _port(provider))
    for path in ("/sandbox/state", "/api/v1/capabilities"):
        answer = read(page, path)
        assert answer.get("status") == 403, answer
        error = json.loads(answer["body"])["error"]
        assert (error["type"], error["reason"]) == ("forbidden", "host_not_allowed")
    reset = read(page, "/sandbox/reset", {"method": "POST"})
    assert reset.get("status") == 403, reset
    rebound_page(page, _port(provider), host="127.0.0.1")
    assert read(page, "/sandbox/state").get("status") == 200


@pytest.fixture(scope="module")
def proxy(sim: RfqSim, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    running = ProxyProcess(str(RFQSIM), sim.base_url, tmp_path_factory.mktemp("proxy-report"))
    url = running.start()
    try:
        yield url
    finally:
        running.stop()


def test_a_rebound_page_cannot_reach_through_the_proxy(page: Page, proxy: str) -> None:
    rebound_page(page, _port(proxy))
    for path in ("/_sim/info", "/v2/health"):
        _refused_host(read(page, path))


def test_the_console_through_the_proxy_keeps_its_controls(
    page: Page, proxy: str, sim: RfqSim
) -> None:
    """A page the proxy served is the upstream's own: its control write is done upstream."""
    rebound_page(page, _port(proxy), host="127.0.0.1")
    try:
        answer = read(page, "/_sim/faults", post_json({"venue_paused": True}))
        assert answer.get("status") == 200, answer
        assert sim.call("GET", "/_sim/faults")["venue_paused"] is True
    finally:
        sim.call("DELETE", "/_sim/faults")


# -- Cross-site writes -----------------------------------------------------------------------


def _attacker_origin(host: str, port: int) -> str:
    return f"http://{host}:{port}"


@pytest.mark.parametrize("host", [HOSTILE, "127.0.0.1"])  # cross-site, then same-site
def test_a_form_or_no_cors_post_from_another_origin_does_not_reset(
    page: Page, sim: RfqSim, attacker_port: int, host: str
) -> None:
    sim.reset()
    moved = sim.advance_clock(3600)["offset_seconds"]
    target = sim.base_url + "/_sim/reset"
    page.goto(_attacker_origin(host, attacker_port) + "/")
    with page.expect_response(target) as answered:
        page.evaluate(FORM_POST, target)
    assert answered.value.status == 403
    body = answered.value.json()["error"]
    reason = "sec_fetch_site_cross_site" if host == HOSTILE else "sec_fetch_site_same_site"
    assert body["details"]["reason"] == reason
    opaque = read(page, target, {"method": "POST", "mode": "no-cors"})
    assert opaque.get("status") == 0, opaque  # the answer is there, unreadable to the page
    refused = sim.requests(path="/_sim/reset", method="POST", status=403)
    assert len(refused) >= 2  # the form's and the fetch's: both answered before this read
    assert sim.call("GET", "/_sim/clock")["offset_seconds"] == moved


def test_a_no_cors_post_from_another_origin_does_not_revoke_a_key(
    page: Page, sim: RfqSim, attacker_port: int
) -> None:
    key = sim.call(
        "POST",
        "/_sim/keys",
        {"partner": "guarded", "environment": "test", "scopes": ["trades:read"]},
    )
    page.goto(_attacker_origin(HOSTILE, attacker_port) + "/")
    target = f"{sim.base_url}/_sim/keys/{key['key_id']}/revoke"
    with page.expect_response(target) as answered:
        read(page, target, {"method": "POST", "mode": "no-cors"})
    assert answered.value.status == 403
    keys = {k["key_id"]: k["status"] for k in sim.call("GET", "/_sim/keys")["keys"]}
    assert keys[key["key_id"]] == "active"


# -- Pages reaching the chains ---------------------------------------------------------------


def _rpc(url: str, method: str, params: list[Any]) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())["result"]


def _set_balance_from(page: Page, rpc_url: str, address: str) -> dict[str, Any]:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "anvil_setBalance",
        "params": [address, "0x1234"],
    }
    return read(page, rpc_url, post_json(call))


def test_a_page_on_another_origin_cannot_set_a_balance_on_the_chains(
    page: Page, sim: RfqSim, attacker_port: int
) -> None:
    page.goto(_attacker_origin(HOSTILE, attacker_port) + "/")
    for rpc_url in sim.rpc_urls.values():
        address = "0x" + secrets.token_hex(20)
        answer = _set_balance_from(page, rpc_url, address)
        assert "error" in answer, answer  # the preflight found no CORS: nothing was sent
        call = {"jsonrpc": "2.0", "id": 1, "method": "anvil_setBalance", "params": [address, "0x1"]}
        blind = read(page, rpc_url, {**post_json(call), "mode": "no-cors"})
        assert blind.get("status") == 0, blind  # sent as text/plain: answered, not run
        assert _rpc(rpc_url, "eth_getBalance", [address, "latest"]) == "0x0"


def test_an_anvil_with_cors_open_lets_the_same_page_set_a_balance(
    page: Page, attacker_port: int
) -> None:
    """The control, and what `--rpc-cors` gives a browser wallet: the same script succeeds."""
    node = start_anvil(97, cors=True)
    try:
        page.goto(_attacker_origin(HOSTILE, attacker_port) + "/")
        address = "0x" + secrets.token_hex(20)
        answer = _set_balance_from(page, node.rpc_url, address)
        assert answer.get("status") == 200, answer
        assert _rpc(node.rpc_url, "eth_getBalance", [address, "latest"]) == "0x1234"
    finally:
        node.stop()
