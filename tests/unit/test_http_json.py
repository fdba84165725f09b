"""rfqkit.http_json.JsonPoster, the JSON-RPC client's transport, against real HTTP servers on
loopback: aiohttp's server (Content-Length and chunked answers, kept-alive connections) and a
raw socket server for what aiohttp would not send (an answer cut short, a body that runs to the
close, a connection closed while idle)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqkit.http_json import JsonPoster, NodeClosed, NodeRefused


@pytest.fixture
async def node() -> AsyncIterator[tuple[str, list[int]]]:
    """An echo node: answers {"echo": body, "peer": client port}; `?chunked` streams it."""
    peers: list[int] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        body: Any = await request.json()
        peer = request.transport.get_extra_info("peername")[1] if request.transport else 0
        peers.append(peer)
        answer = json.dumps({"echo": body, "peer": peer}).encode()
        if "chunked" in request.query:
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            for start in range(0, len(answer), 7):
                await response.write(answer[start : start + 7])
            await response.write_eof()
            return response
        return web.Response(body=answer, content_type="application/json")

    app = web.Application()
    app.router.add_post("/", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("/")), peers
    await server.close()


async def test_answers_come_back_over_one_kept_alive_connection(
    node: tuple[str, list[int]],
) -> None:
    url, peers = node
    poster = JsonPoster(url, timeout_s=5)
    try:
        for i in range(5):
            assert (await poster.post({"i": i, "text": "naïve"}))["echo"] == {
                "i": i,
                "text": "naïve",
            }
        assert len(set(peers)) == 1
        big = {"blob": "x" * 300_000}
        assert (await poster.post(big))["echo"] == big
    finally:
        await poster.close()


async def test_a_chunked_answer_is_read_whole(node: tuple[str, list[int]]) -> None:
    url, _ = node
    poster = JsonPoster(url + "?chunked=1", timeout_s=5)
    try:
        payload = [{"jsonrpc": "2.0", "id": n, "method": "eth_call"} for n in range(50)]
        assert (await poster.post(payload))["echo"] == payload
        assert (await poster.post([1]))["echo"] == [1]  # the connection is usable after it
    finally:
        await poster.close()


async def test_concurrent_posts_open_connections_up_to_the_limit(
    node: tuple[str, list[int]],
) -> None:
    url, peers = node
    poster = JsonPoster(url, timeout_s=5, max_connections=3)
    try:
        answers = await asyncio.gather(*(poster.post(n) for n in range(12)))
        assert [a["echo"] for a in answers] == list(range(12))
        assert 1 <= len(set(peers)) <= 3
    finally:
        await poster.close()


async def test_nothing_listening_is_refused() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    poster = JsonPoster(f"http://127.0.0.1:{port}/", timeout_s=5)
    with pytest.raises(NodeRefused):
        await poster.post({})
    await poster.close()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def raw_server(handler: Handler) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    return await reader.readexactly(length)


async def test_an_answer_cut_short_is_a_closed_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"result":')
        await writer.drain()
        writer.close()

    server, url = await raw_server(handler)
    async with server:
        poster = JsonPoster(url, timeout_s=5)
        with pytest.raises(NodeClosed):
            await poster.post({})
        await poster.close()


class AnswerOnceAndClose:
    """A node that answers each connection's one request with its body echoed, then closes
    the connection; `with_length` False leaves the length out (the body runs to the close)."""

    def __init__(self, *, with_length: bool) -> None:
        self.with_length = with_length
        self.connections = 0

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        body = await read_request(reader)
        length = b"Content-Length: %d\r\n" % len(body) if self.with_length else b""
        writer.write(b"HTTP/1.1 200 OK\r\n" + length + b"\r\n" + body)
        await writer.drain()
        writer.close()  # no Connection: close header: the client learns it from the socket


async def test_a_body_without_length_runs_to_the_close_and_is_not_reused() -> None:
    node = AnswerOnceAndClose(with_length=False)
    server, url = await raw_server(node)
    async with server:
        poster = JsonPoster(url, timeout_s=5)
        assert await poster.post({"a": 1}) == {"a": 1}
        assert await poster.post({"a": 2}) == {"a": 2}
        await poster.close()
    assert node.connections == 2


async def test_a_connection_the_node_closed_while_idle_is_replaced() -> None:
    node = AnswerOnceAndClose(with_length=True)
    server, url = await raw_server(node)
    async with server:
        poster = JsonPoster(url, timeout_s=5)
        assert await poster.post([1]) == [1]
        # The idle connection's reader sees the node's close (b"": end of stream).
        assert await poster._idle[0].reader.read() == b""
        assert await poster.post([2]) == [2]
        await poster.close()
    assert node.connections == 2


async def test_not_json_is_a_value_error_and_a_silent_node_a_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = await read_request(reader)
        if body == b"1":
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 4\r\n\r\noops")
            await writer.drain()
            body = await read_request(reader)  # the next one, on the kept connection
        await reader.read()  # never answers it: waits for the client to give up
        writer.close()

    server, url = await raw_server(handler)
    async with server:
        poster = JsonPoster(url, timeout_s=0.3)
        with pytest.raises(ValueError, match="Expecting value"):
            await poster.post(1)
        with pytest.raises(TimeoutError):
            await poster.post(2)
        await poster.close()


async def test_the_timeout_covers_the_wait_for_a_free_connection() -> None:
    connections = 0
    holding = asyncio.Event()
    handled = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        holding.set()
        await reader.read()  # never answers: waits for the client to give up
        writer.close()
        await writer.wait_closed()
        handled.set()

    server, url = await raw_server(silent)
    async with server:
        # The first post holds the only connection well past the second's deadline (with one
        # timeout for both, the first's expiry could free it just before the second's).
        poster = JsonPoster(url, timeout_s=30, max_connections=1)
        first = asyncio.create_task(poster.post(1))
        await holding.wait()
        poster.timeout_s = 0.3
        with pytest.raises(TimeoutError):
            await poster.post(2)
        assert connections == 1  # the second never had a connection, and timed out waiting
        assert not first.done()
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
        await poster.close()
        # The server's side of the connection closed too, before the loop ends (else its
        # socket is left for a later test's garbage collection to report).
        await handled.wait()
