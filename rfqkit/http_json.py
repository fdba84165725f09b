"""POST a JSON body to one HTTP(S) URL and read the JSON answer, over a small pool of
kept-alive HTTP/1.1 connections: the transport of the JSON-RPC client (rfqkit/chain.py).

Why not aiohttp's client session: a chain node is one loopback URL answering small JSON bodies,
and every firm quote makes about two round trips to it. aiohttp's client spent 0.28-0.33 ms of
CPU per batch of three eth_calls (request and response objects, cookie jar, tracing hooks,
timers) against 0.14-0.15 ms for this, measured against Anvil in one process
(docs/performance.md, "Firm path, issue 33"). What is needed of HTTP here is small: one request
line with a Content-Length body out; a status line, headers and a Content-Length, chunked or
read-to-close body back."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any
from urllib.parse import urlsplit

from rfqkit import json_text

__all__ = ["JsonPoster", "NodeClosed", "NodeRefused"]

MAX_HEAD_BYTES = 64 * 1024  # status line and headers of one answer


class NodeRefused(ConnectionError):
    """No connection could be opened (nothing listens, or the host is unreachable)."""


class NodeClosed(ConnectionError):
    """The connection broke or closed before a whole answer was read."""


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @property
    def usable(self) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()

    async def exchange(self, request: bytes) -> tuple[bytes, bool]:
        """Send one request; its answer's body and whether the connection may be used again."""
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head[:-4].split(b"\r\n")
        version = lines[0][:8]
        length: int | None = None
        chunked = False
        keep = version == b"HTTP/1.1"
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                keep = keep and b"close" not in value.lower()
        if chunked:
            return await self._chunks(), keep
        if length is not None:
            return await self.reader.readexactly(length), keep
        return await self.reader.read(), False  # no length: the body runs to the close

    async def _chunks(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                while await self.reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailer fields
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)


class JsonPoster:
    """POST JSON to `url`; at most `max_connections` at once (more wait for one to be free)."""

    def __init__(self, url: str, *, timeout_s: float, max_connections: int = 64) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or parts.hostname is None:
            raise ValueError(f"an http:// or https:// URL is needed, got {url!r}")
        self._host = parts.hostname
        self._tls = ssl.create_default_context() if parts.scheme == "https" else None
        self._port = parts.port or (443 if self._tls else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._head = (
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: "
        ).encode()
        self.timeout_s = timeout_s
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()  # every connection not yet seen closed
        self._closed = False

    async def post(self, payload: Any) -> Any:
        """The answer's JSON (whatever its HTTP status, as a node's errors are JSON-RPC
        objects). Raises NodeRefused, NodeClosed, TimeoutError, or ValueError (not JSON)."""
        body = json_text.dumps(payload)
        request = self._head + b"%d\r\n\r\n" % len(body) + body
        # The timeout covers the wait for a free connection too, as aiohttp's total timeout did.
        async with asyncio.timeout(self.timeout_s), self._slots:
            connection = await self._connection()
            try:
                raw, keep = await connection.exchange(request)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError) as exc:
                connection.close()
                raise NodeClosed(str(exc)) from exc
            except BaseException:  # timed out or cancelled mid-answer: the rest is unread
                connection.close()
                raise
            if keep and not self._closed:
                self._idle.append(connection)
            else:
                connection.close()
        return json_text.loads(raw)

    async def _connection(self) -> _Connection:
        while self._idle:
            connection = self._idle.pop()
            if connection.usable:
                return connection
            connection.close()  # the node closed it while it was idle
        try:
            reader, writer = await asyncio.open_connection(
                self._host, self._port, limit=MAX_HEAD_BYTES, ssl=self._tls
            )
        except OSError as exc:
            raise NodeRefused(str(exc)) from exc
        connection = _Connection(reader, writer)
        # Those closed since the last open are forgotten here, so the set stays as small as
        # the pool; until then `close` can still wait for them to finish closing.
        self._open = {c for c in self._open if not c.writer.is_closing()}
        self._open.add(connection)
        return connection

    async def close(self) -> None:
        """Close every connection and wait until they are closed; one in use closes when its
        answer is read (or at once, if that raced the close)."""
        self._closed = True
        self._idle = []
        connections, self._open = list(self._open), set()
        for connection in connections:
            connection.close()
        for connection in connections:
            with contextlib.suppress(OSError):  # already broken: closed is what was wanted
                await connection.writer.wait_closed()
