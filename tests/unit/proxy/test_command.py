"""`rfqsim proxy` as a process in front of a scripted upstream: one line per violation as it
happens, the report on SIGTERM/SIGINT in the issue's shape, the exit status with and without
--fail-on-violation, and its refusals (bad arguments 2, a taken port 3)."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from xml.etree import ElementTree as ET

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.unit.proxy.exchanges import answer_headers, request_id
from tests.unit.proxy.proxy_process import RFQSIM, WAIT_S, start_proxy

FINDING_KEYS = {
    "rule",
    "side",
    "method",
    "path",
    "status",
    "request_id",
    "message",
    "request",
    "response",
}


async def _health(request: web.Request) -> web.Response:
    rid = request_id()
    return web.Response(body=b'{"data": {"status": "ok"}}', headers=answer_headers(rid))


async def _wrong_id(request: web.Request) -> web.Response:
    body = {"error": {"code": "not_found", "message": "no", "request_id": "req_elsewhere"}}
    return web.Response(
        status=404, body=json.dumps(body).encode(), headers=answer_headers(request_id())
    )


@pytest.fixture
async def upstream() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_get("/v2/health", _health)
    app.router.add_get("/v2/rfq/{id}", _wrong_id)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("")).rstrip("/")
    finally:
        await server.close()


async def _line(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    return (await asyncio.wait_for(process.stdout.readline(), WAIT_S)).decode()


async def test_a_run_prints_each_violation_and_writes_the_report_on_sigterm(
    upstream: str, tmp_path: Path
) -> None:
    report = tmp_path / "report"
    process, url = await start_proxy(
        "--upstream",
        upstream,
        "--listen",
        "127.0.0.1:0",
        "--report",
        str(report),
        "--fail-on-violation",
    )
    async with aiohttp.ClientSession() as client:
        async with client.get(f"{url}/v2/health") as resp:
            assert resp.status == 200
        claim = {"X-Rfq-Claim": "rfqc_secret_token"}
        async with client.get(f"{url}/v2/rfq/rfq_1", headers=claim) as resp:
            assert resp.status == 404
            assert resp.headers["X-Rfqsim-Violations"] == (
                "rfq/errors/request_id-equals-x-request-id-header"
            )
    printed = await _line(process)
    assert printed.startswith(
        "VIOLATION service rfq/errors/request_id-equals-x-request-id-header: "
        "GET /v2/rfq/rfq_1 -> 404"
    ), printed
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), WAIT_S) == 1
    summary = await _line(process)
    assert "2 exchanges, 1 violations (1 service, 0 client)" in summary, summary
    written = json.loads((report / "violations.json").read_text())
    assert set(written) == {"exchanges", "rules_exercised", "violations"}
    assert written["exchanges"] == 2
    assert (
        "rfq/overview/conventions/every-response-carries-x-request-id" in written["rules_exercised"]
    )
    (violation,) = written["violations"]
    assert set(violation) == FINDING_KEYS
    assert violation["rule"] == "rfq/errors/request_id-equals-x-request-id-header"
    assert (violation["side"], violation["method"], violation["path"]) == (
        "service",
        "GET",
        "/v2/rfq/rfq_1",
    )
    assert violation["status"] == 404
    assert violation["request_id"].startswith("req_")
    assert violation["response"]["status"] == 404
    assert "rfqc_secret_token" not in (report / "violations.json").read_text(), "redacted"
    suite = ET.parse(report / "junit.xml").getroot()
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["rfq/errors/request_id-equals-x-request-id-header"]
    assert int(suite.get("tests", "0")) == len(written["rules_exercised"])
    markdown = (report / "violations.md").read_text()
    assert "request_id equals the X-Request-Id header" in markdown


async def test_a_clean_run_exits_0_even_with_fail_on_violation(
    upstream: str, tmp_path: Path
) -> None:
    process, url = await start_proxy(
        "--upstream",
        upstream,
        "--listen",
        "127.0.0.1:0",
        "--report",
        str(tmp_path),
        "--fail-on-violation",
    )
    async with aiohttp.ClientSession() as client, client.get(f"{url}/v2/health") as resp:
        assert resp.status == 200
    process.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
    assert json.loads((tmp_path / "violations.json").read_text())["violations"] == []


async def test_bad_arguments_are_2_and_a_taken_port_is_3(tmp_path: Path) -> None:
    bad = await asyncio.create_subprocess_exec(
        str(RFQSIM), "proxy", "--upstream", "ftp://x", stderr=asyncio.subprocess.PIPE
    )
    _, err = await bad.communicate()
    assert bad.returncode == 2
    assert b"--upstream must be an http(s) URL" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = await asyncio.create_subprocess_exec(
            str(RFQSIM),
            "proxy",
            "--upstream",
            "http://127.0.0.1:9",
            "--listen",
            f"127.0.0.1:{port}",
            "--report",
            str(tmp_path),
            stderr=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
        )
        _, err = await asyncio.wait_for(busy.communicate(), WAIT_S)
    assert busy.returncode == 3, err
    assert f"cannot listen on 127.0.0.1:{port}".encode() in err
