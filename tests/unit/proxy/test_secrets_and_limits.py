"""`rfqsim proxy` as a process in front of a real upstream on loopback that misbehaves: secrets
without their spec prefix (a claim token, a signing secret, a proof's signature, an API key,
a custom header's value) never reach stdout, stderr or any report file; a silent upstream is
answered 502 in the spec's envelope within --upstream-timeout and said so; a 200 whose
`application/json` body is not JSON is a service finding; a non-loopback --listen is warned
about."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.unit.proxy.exchanges import answer_headers, request_id
from tests.unit.proxy.proxy_process import WAIT_S, start_proxy

# Secrets in no shape the patterns know: only their names give them away.
CLAIM = "plainClaimToken0123456789"
SIGNING = "plainSigningSecret-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SIGNATURE = "plainSignature-0011223344556677"
API_KEY = "plainApiKeyWithoutItsShape42"
CUSTOM = "customHeaderSecret-98765"
SECRETS = (CLAIM, SIGNING, SIGNATURE, API_KEY, CUSTOM)
TIMEOUT_S = 1.0


async def _request(request: web.Request) -> web.Response:
    await request.read()
    data = {
        "rfqId": "rfq_1",
        "claimToken": CLAIM,  # no rfqc_: the very violation the proxy reports
        "status": "no_quote",
        "reason": "no_valid_quote",
        "routing": {},
    }
    return web.Response(
        body=json.dumps({"data": data}).encode(),
        headers=answer_headers(request_id(), ("X-Auth-Token", CUSTOM)),
    )


async def _webhook(request: web.Request) -> web.Response:
    await request.read()
    created = {
        "id": "whe_1",
        "url": "https://example.test/hook",
        "eventTypes": ["rfq.filled"],
        "status": "active",
        "signingSecret": SIGNING,  # no whsec_: the assertion quotes the bare value
    }
    return web.Response(
        status=201,
        body=json.dumps({"data": created}).encode(),
        headers=answer_headers(request_id()),
    )


async def _not_json(request: web.Request) -> web.Response:
    return web.Response(body=b"<html>maintenance</html>", headers=answer_headers(request_id()))


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[str, asyncio.Event]]:
    released = asyncio.Event()

    async def silent(request: web.Request) -> web.Response:
        await released.wait()  # says nothing until the test is over
        return web.Response(body=b"{}", headers=answer_headers(request_id()))

    app = web.Application()
    app.router.add_post("/v2/rfq/request", _request)
    app.router.add_post("/v1/webhooks", _webhook)
    app.router.add_get("/v2/health", _not_json)
    app.router.add_get("/v2/rfq/levels", silent)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("")).rstrip("/"), released
    finally:
        released.set()
        await server.close()


async def _stop(process: asyncio.subprocess.Process) -> tuple[str, str]:
    process.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(process.communicate(), WAIT_S)
    return out.decode(), err.decode()


async def test_no_secret_reaches_any_output_whatever_its_shape(
    upstream: tuple[str, asyncio.Event], tmp_path: Path
) -> None:
    url, _ = upstream
    report = tmp_path / "report"
    process, proxy = await start_proxy(
        *("--upstream", url, "--listen", "127.0.0.1:0", "--report", str(report)),
        *("--redact-header", "X-Auth-Token"),
    )
    headers = {"Authorization": f"Bearer {API_KEY}", "X-Auth-Token": CUSTOM}
    body = {
        "chainId": 97,
        "sellToken": "0x" + "1" * 40,
        "buyToken": "0x" + "2" * 40,
        "sellAmount": "1000",
        "taker": "0x" + "3" * 40,
        "takerProof": {"nonce": "n1", "issuedAt": "2026-01-01T00:00:00Z", "signature": SIGNATURE},
    }
    async with aiohttp.ClientSession() as client:
        async with client.post(f"{proxy}/v2/rfq/request", json=body, headers=headers) as resp:
            assert resp.status == 200
            assert "rfq/" in resp.headers["X-Rfqsim-Violations"]  # the claim token's prefix
        hook = {"url": "https://example.test/hook", "eventTypes": ["rfq.filled"]}
        async with client.post(f"{proxy}/v1/webhooks", json=hook, headers=headers) as resp:
            assert resp.status == 201
            assert resp.headers["X-Rfqsim-Violations"]  # the signing secret's prefix
    out, err = await _stop(process)
    written = {p.name: p.read_text() for p in report.iterdir()}
    assert set(written) == {"violations.json", "violations.md", "junit.xml"}
    violations = json.loads(written["violations.json"])["violations"]
    messages = " ".join(v["message"] for v in violations)
    assert '"claimToken": "<redacted>"' in messages  # the findings quote the very values
    assert {v["path"] for v in violations} >= {"/v2/rfq/request", "/v1/webhooks"}
    for name, text in {"stdout": out, "stderr": err, **written}.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret} in {name}"
    request_finding = next(v for v in violations if v["path"] == "/v2/rfq/request")
    assert request_finding["request"]["headers"]["X-Auth-Token"] == "<redacted>"
    assert json.loads(request_finding["request"]["body"])["takerProof"]["signature"] == (
        "<redacted>"
    )


async def test_a_silent_upstream_is_a_502_envelope_within_the_timeout(
    upstream: tuple[str, asyncio.Event], tmp_path: Path
) -> None:
    url, _ = upstream
    process, proxy = await start_proxy(
        *("--upstream", url, "--listen", "127.0.0.1:0", "--report", str(tmp_path / "r")),
        *("--upstream-timeout", str(TIMEOUT_S)),
    )
    async with aiohttp.ClientSession() as client:
        started = time.monotonic()
        async with client.get(f"{proxy}/v2/rfq/levels?chainId=97") as resp:
            took = time.monotonic() - started
            assert resp.status == 502
            error = (await resp.json())["error"]
    assert TIMEOUT_S <= took < TIMEOUT_S + 2.0, took
    assert error["code"] == "upstream_error"
    assert error["request_id"] == resp.headers["X-Request-Id"]
    assert error["details"] == {"reason": "upstream_timeout", "timeoutS": TIMEOUT_S}
    out, _ = await _stop(process)
    assert "UPSTREAM GET /v2/rfq/levels: the upstream sent nothing for 1 s" in out, out


async def test_a_200_that_says_json_and_is_not_is_a_service_finding(
    upstream: tuple[str, asyncio.Event], tmp_path: Path
) -> None:
    url, _ = upstream
    report = tmp_path / "report"
    process, proxy = await start_proxy(
        "--upstream", url, "--listen", "127.0.0.1:0", "--report", str(report)
    )
    async with aiohttp.ClientSession() as client, client.get(f"{proxy}/v2/health") as resp:
        assert resp.status == 200
        assert await resp.read() == b"<html>maintenance</html>"  # relayed unchanged
        assert resp.headers["X-Rfqsim-Violations"] == "rfq/endpoints/all-bodies-json"
    out, _ = await _stop(process)
    assert "VIOLATION service rfq/endpoints/all-bodies-json: GET /v2/health -> 200" in out
    (finding,) = json.loads((report / "violations.json").read_text())["violations"]
    assert (finding["rule"], finding["side"]) == ("rfq/endpoints/all-bodies-json", "service")
    assert "is not JSON" in finding["message"]


async def test_a_listen_address_off_loopback_is_warned_about(
    upstream: tuple[str, asyncio.Event], tmp_path: Path
) -> None:
    url, _ = upstream
    for listen, warned in (("0.0.0.0:0", True), ("127.0.0.1:0", False), ("localhost:0", False)):
        process, _ = await start_proxy(
            "--upstream", url, "--listen", listen, "--report", str(tmp_path / "r")
        )
        _, err = await _stop(process)
        assert ("warning: listening on 0.0.0.0, not loopback" in err) is warned, (listen, err)
