"""A reverse proxy in front of the service that breaks the spec in one way at a time.

Every request is forwarded as it came (method, path, query, headers, body) from the client's
own address when that is a loopback address, so the service still sees one client IP per test;
the answer comes back through the active :class:`~conformance.mutants.mutations.Mutation`,
which may rewrite its status, headers or body. WebSocket upgrades are relayed frame by frame,
each text frame through the mutation's ``rewrite_frame`` when it has one (else unchanged). The
proxy runs in a thread of its own (:class:`MutationProxy`), so a test tool can start it, point
the suite at :attr:`MutationProxy.url` and stop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from conformance.mutants.mutations import CLOSE_POLICY, DOWN, UP, Exchange, Mutation

# Hop-by-hop headers (RFC 9110 7.6.1) and the ones aiohttp recomputes from the body.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "content-encoding",
        "host",
    }
)
_UPSTREAM_TIMEOUT = aiohttp.ClientTimeout(total=120)


def _forwardable(headers: Any) -> CIMultiDict[str]:
    return CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in _HOP)


@dataclass
class _Upstream:
    """One client session per local address the proxy leaves from."""

    base_url: str
    sessions: dict[str, aiohttp.ClientSession] = field(default_factory=dict)

    def session(self, remote: str | None) -> aiohttp.ClientSession:
        local = remote if remote and remote.startswith("127.") else "127.0.0.1"
        if local not in self.sessions:
            connector = aiohttp.TCPConnector(local_addr=(local, 0), force_close=True)
            self.sessions[local] = aiohttp.ClientSession(
                connector=connector, timeout=_UPSTREAM_TIMEOUT, auto_decompress=False
            )
        return self.sessions[local]

    async def close(self) -> None:
        for session in self.sessions.values():
            await session.close()
        self.sessions.clear()


class _Handler:
    def __init__(self, upstream: _Upstream, mutation: Mutation | None) -> None:
        self.upstream = upstream
        self.mutation = mutation

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._relay_websocket(request)
        body = await request.read()
        session = self.upstream.session(request.remote)
        async with session.request(
            request.method,
            self.upstream.base_url + request.rel_url.path_qs,
            headers=_forwardable(request.headers),
            data=body or None,
            allow_redirects=False,
        ) as answer:
            raw = await answer.read()
            exchange = Exchange(
                method=request.method,
                path=request.rel_url.path,
                query=dict(request.rel_url.query),
                request_headers=CIMultiDict(request.headers),
                request_body=body,
                status=answer.status,
                headers=_forwardable(answer.headers),
                body=raw,
            )
        if self.mutation is not None and self.mutation.applies(exchange):
            self.mutation.apply(exchange)
        return web.Response(status=exchange.status, headers=exchange.headers, body=exchange.body)

    async def _relay_websocket(self, request: web.Request) -> web.StreamResponse:
        session = self.upstream.session(request.remote)
        headers = {k: v for k, v in request.headers.items() if k.lower().startswith(("auth", "x-"))}
        url = self.upstream.base_url.replace("http", "ws", 1) + request.rel_url.path_qs
        rewrite = self.mutation.rewrite_frame if self.mutation is not None else None
        async with session.ws_connect(url, headers=headers) as upstream:
            downstream = web.WebSocketResponse()
            await downstream.prepare(request)

            async def pump(src: Any, dst: Any, direction: str) -> None:
                async for message in src:
                    if message.type == aiohttp.WSMsgType.TEXT:
                        text = message.data if rewrite is None else rewrite(direction, message.data)
                        if text is None:  # the mutated service closes the connection here
                            await downstream.close(code=CLOSE_POLICY, message=b"closed")
                            await upstream.close()
                            return
                        await dst.send_str(text)
                    elif message.type == aiohttp.WSMsgType.BINARY:
                        await dst.send_bytes(message.data)
                    else:
                        break
                await dst.close()

            await asyncio.gather(pump(upstream, downstream, DOWN), pump(downstream, upstream, UP))
            return downstream


class MutationProxy:
    """The proxy on 127.0.0.1 (a free port), in a thread with its own event loop."""

    def __init__(self, upstream_url: str, mutation: Mutation | None) -> None:
        self.upstream_url = upstream_url.rstrip("/")
        self.mutation = mutation
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self._upstream = _Upstream(self.upstream_url)

    def start(self) -> str:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self.url

    async def _start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", _Handler(self._upstream, self.mutation).handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{host}:{port}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        await self._upstream.close()

    def stop(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()


@contextlib.contextmanager
def running_proxy(upstream_url: str, mutation: Mutation | None) -> Iterator[MutationProxy]:
    proxy = MutationProxy(upstream_url, mutation)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
