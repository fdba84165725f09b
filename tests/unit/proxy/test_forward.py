"""The proxy's forwarding over real loopback HTTP, against a scripted upstream (an aiohttp app of
the test's own): the request arrives as the client sent it, the answer comes back as the upstream
sent it, bodies stream both ways, WebSocket frames are relayed, a refused upgrade's answer and an
unreachable upstream are answered as the spec's envelope says."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqkit.free_ports import unclaimed_port
from rfqsim.proxy.documents import Documents
from rfqsim.proxy.findings import Findings
from rfqsim.proxy.forward import VIOLATIONS_HEADER, Forwarder
from rfqsim.proxy.state import State
from rfqsim.proxy.watcher import Watcher
from tests.unit.proxy.exchanges import answer_headers, request_id

Seen = dict[str, Any]


class Upstream:
    """A scripted service: what it received, and gates a test opens to let it go on."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.first_chunk_sent = asyncio.Event()
        self.go_on = asyncio.Event()
        self.first_body_chunk = asyncio.Event()
        self.app = web.Application()
        self.app.router.add_route("*", "/echo", self.echo)
        self.app.router.add_get("/v2/rfq/rfq_plain", self.plain_error)
        self.app.router.add_get("/stream", self.stream)
        self.app.router.add_post("/upload", self.upload)
        self.app.router.add_get("/v2/health", self.health)
        self.app.router.add_get("/gzip", self.gzipped)
        self.app.router.add_get("/v2/maker/stream", self.socket)

    async def echo(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.seen.append(
            {
                "method": request.method,
                "raw_path": request.raw_path,
                "headers": list(request.headers.items()),
                "body": body,
            }
        )
        rid = request_id()
        response = web.Response(
            status=299,
            reason="Fine Indeed",
            body=b'{"data": {"echo": true}}',
            headers=[*answer_headers(rid), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")],
        )
        return response

    async def plain_error(self, request: web.Request) -> web.Response:
        rid = request_id()
        return web.Response(
            status=404,
            body=json.dumps(
                {"error": {"code": "not_found", "message": "no", "request_id": "x"}}
            ).encode(),
            headers=answer_headers(rid),
        )

    async def health(self, request: web.Request) -> web.Response:
        rid = request_id()
        return web.Response(body=b'{"data": {"status": "ok"}}', headers=answer_headers(rid))

    async def gzipped(self, request: web.Request) -> web.Response:
        rid = request_id()
        return web.Response(
            body=gzip.compress(b'{"data": {"status": "ok"}}'),
            headers=[*answer_headers(rid), ("Content-Encoding", "gzip")],
        )

    async def stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"data: one\n\n")
        self.first_chunk_sent.set()
        await self.go_on.wait()
        await response.write(b"data: two\n\n")
        await response.write_eof()
        return response

    async def upload(self, request: web.Request) -> web.Response:
        first = await request.content.readany()
        self.first_body_chunk.set()
        rest = await request.content.read()
        self.seen.append({"body": first + rest, "headers": list(request.headers.items())})
        return web.Response(body=b"{}", content_type="application/json")

    async def socket(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != "Bearer maker":
            rid = request_id()
            body = {"error": {"code": "unauthorized", "message": "no key", "request_id": rid}}
            return web.Response(
                status=401, body=json.dumps(body).encode(), headers=answer_headers(rid)
            )
        ws = web.WebSocketResponse(protocols=["rfq.v1"], autoping=False)
        ws.headers["X-Request-Id"] = request_id()
        await ws.prepare(request)
        async for message in ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                await ws.send_str("echo:" + message.data)
            elif message.type == aiohttp.WSMsgType.BINARY:
                await ws.send_bytes(message.data[::-1])
            elif message.type == aiohttp.WSMsgType.PING:
                await ws.pong(message.data)
                await ws.close(code=4001, message=b"done")
        return ws


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[Upstream, str]]:
    scripted = Upstream()
    server = TestServer(scripted.app, host="127.0.0.1")
    await server.start_server()
    try:
        yield scripted, str(server.make_url("")).rstrip("/")
    finally:
        await server.close()


async def _proxy(
    upstream_url: str, *, header: bool = True
) -> tuple[TestServer, Findings, Forwarder]:
    import io

    findings = Findings(io.StringIO())
    forwarder = Forwarder(
        upstream_url, Watcher(findings, Documents(), State()), findings, header=header
    )
    await forwarder.start()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forwarder.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server, findings, forwarder


@pytest.fixture
async def proxied(upstream: tuple[Upstream, str]) -> AsyncIterator[tuple[Upstream, str, Findings]]:
    scripted, url = upstream
    server, findings, forwarder = await _proxy(url)
    try:
        yield scripted, str(server.make_url("")).rstrip("/"), findings
    finally:
        await server.close()
        await forwarder.close()


async def _raw(url: str, request: bytes) -> bytes:
    """One request written as bytes on a fresh connection; the whole answer as bytes."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_the_request_arrives_as_sent_and_the_answer_returns_as_answered(
    proxied: tuple[Upstream, str, Findings],
) -> None:
    scripted, url, _ = proxied
    request = (
        b"POST /echo?b=2&a=%2F+x HTTP/1.1\r\nHost: client.example\r\nX-Custom: 1\r\n"
        b"X-Custom: 2\r\nX-Forwarded-For: 10.0.0.9\r\nConnection: close, X-Drop\r\nX-Drop: me\r\n"
        b'Keep-Alive: timeout=5\r\nContent-Length: 7\r\n\r\n{"a":1}'
    )
    answer = await _raw(url, request)
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 299 Fine Indeed"
    assert body == b'{"data": {"echo": true}}'
    assert lines.count("Set-Cookie: a=1") == 1
    assert lines.count("Set-Cookie: b=2") == 1
    assert not any(line.startswith(VIOLATIONS_HEADER) for line in lines)
    (seen,) = scripted.seen
    assert seen["method"] == "POST"
    assert seen["raw_path"] == "/echo?b=2&a=%2F+x"
    assert seen["body"] == b'{"a":1}'
    names = [name.lower() for name, _ in seen["headers"]]
    assert ("X-Custom", "1") in seen["headers"]
    assert ("X-Custom", "2") in seen["headers"]
    assert "x-drop" not in names, "a header the Connection header lists is hop-by-hop"
    assert "keep-alive" not in names
    assert "user-agent" not in names, "no header the client did not send"
    host = dict((k.lower(), v) for k, v in seen["headers"])["host"]
    assert host != "client.example", "Host names the upstream"
    forwarded = [v for k, v in seen["headers"] if k.lower() == "x-forwarded-for"]
    assert forwarded == ["10.0.0.9, 127.0.0.1"]


async def test_head_keeps_the_upstreams_content_length(
    proxied: tuple[Upstream, str, Findings],
) -> None:
    _, url, findings = proxied
    answer = await _raw(url, b"HEAD /v2/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert body == b""
    assert b"\r\nContent-Length: 26" in head, head
    assert findings.total == 0


async def test_a_violating_answer_carries_the_header_unless_told_not_to(
    upstream: tuple[Upstream, str],
) -> None:
    _, upstream_url = upstream
    for header in (True, False):
        server, findings, forwarder = await _proxy(upstream_url, header=header)
        try:
            async with aiohttp.ClientSession() as client:
                claim = {"X-Rfq-Claim": "rfqc_x"}
                async with client.get(server.make_url("/v2/rfq/rfq_plain"), headers=claim) as resp:
                    body = await resp.read()
                    got = resp.headers.get(VIOLATIONS_HEADER)
            assert json.loads(body)["error"]["request_id"] == "x"  # untouched
            if header:
                assert got == "rfq/errors/request_id-equals-x-request-id-header"
            else:
                assert got is None
            assert findings.total == 1
        finally:
            await server.close()
            await forwarder.close()


async def test_an_answer_streams_through_before_the_upstream_finished(
    proxied: tuple[Upstream, str, Findings],
) -> None:
    scripted, url, _ = proxied
    async with aiohttp.ClientSession() as client, client.get(f"{url}/stream") as resp:
        first = await resp.content.readuntil(b"\n\n")
        assert first == b"data: one\n\n"
        assert not scripted.go_on.is_set(), "the first event came while the upstream waited"
        scripted.go_on.set()
        assert await resp.content.read() == b"data: two\n\n"


async def test_a_request_body_streams_to_the_upstream_as_it_comes(
    proxied: tuple[Upstream, str, Findings],
) -> None:
    scripted, url, _ = proxied
    second_sent = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield b'{"part": '
        await scripted.first_body_chunk.wait()  # the upstream has the first chunk already
        second_sent.set()
        yield b'"two"}'

    async with aiohttp.ClientSession() as client, client.post(f"{url}/upload", data=body()) as resp:
        assert resp.status == 200
    assert second_sent.is_set()
    assert scripted.seen[-1]["body"] == b'{"part": "two"}'


async def test_a_compressed_answer_is_relayed_compressed_and_checked_decoded(
    proxied: tuple[Upstream, str, Findings],
) -> None:
    _, url, findings = proxied
    async with (
        aiohttp.ClientSession(auto_decompress=False) as client,
        client.get(f"{url}/gzip") as resp,
    ):
        raw = await resp.read()
        assert resp.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(raw) == b'{"data": {"status": "ok"}}'
    assert findings.total == 0
    assert findings.exchanges == 1


async def test_websocket_frames_pass_both_ways_with_pings_and_close_codes(
    proxied: tuple[Upstream, str, Findings],
) -> None:
    _, url, findings = proxied
    async with (
        aiohttp.ClientSession() as client,
        client.ws_connect(
            f"{url}/v2/maker/stream",
            headers={"Authorization": "Bearer maker"},
            protocols=["rfq.v1"],
            autoping=False,
        ) as ws,
    ):
        assert ws.protocol == "rfq.v1"
        await ws.send_str("hello")
        assert (await ws.receive()).data == "echo:hello"
        await ws.send_bytes(b"abc")
        assert (await ws.receive()).data == b"cba"
        await ws.ping(b"p")
        pong = await ws.receive()
        assert (pong.type, pong.data) == (aiohttp.WSMsgType.PONG, b"p")
        closing = await ws.receive()
        assert closing.type == aiohttp.WSMsgType.CLOSE
        assert closing.data == 4001
    assert findings.exchanges == 1


async def test_a_refused_upgrade_is_answered_with_the_upstreams_answer(
    proxied: tuple[Upstream, str, Findings],
) -> None:
    _, url, findings = proxied
    async with aiohttp.ClientSession() as client:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(f"{url}/v2/maker/stream")
        assert refused.value.status == 401
        async with client.get(
            f"{url}/v2/maker/stream",
            headers={
                "Upgrade": "websocket",
                "Connection": "Upgrade",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            },
        ) as resp:
            body = await resp.json()
    assert resp.status == 401
    assert body["error"]["code"] == "unauthorized"
    assert body["error"]["request_id"] == resp.headers["X-Request-Id"]
    assert findings.total == 0


async def test_an_unreachable_upstream_is_a_502_envelope_and_reported() -> None:
    dead = f"http://127.0.0.1:{unclaimed_port()}"
    server, findings, forwarder = await _proxy(dead)
    try:
        async with aiohttp.ClientSession() as client:
            async with client.post(server.make_url("/v2/rfq/request"), json={"a": 1}) as resp:
                body = await resp.json()
                assert resp.status == 502
                assert resp.headers["Content-Type"].startswith("application/json")
                assert body["error"]["code"] == "upstream_error"
                assert body["error"]["request_id"] == resp.headers["X-Request-Id"]
            async with client.get(server.make_url("/tickers")) as resp:
                assert resp.status == 502
                assert isinstance((await resp.json())["error"], str), "the feed's own error body"
        assert findings.upstream_failures == 2
        assert findings.exchanges == 2
        assert findings.last_upstream_failure is not None
        assert findings.last_upstream_failure.path == "/tickers"
    finally:
        await server.close()
        await forwarder.close()
