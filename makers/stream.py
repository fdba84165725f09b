"""Maker-stream basics under the client: the stream URL, reconnect backoff, the handshake and
the first `welcome`, and the client's own errors (all re-exported by `makers.client`)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from rfqkit.maker_protocol import ProtocolError, Welcome, parse_server_message

STREAM_PATH = "/v2/maker/stream"


class MakerClientError(Exception):
    """Base class of the client's own errors."""


class MakerAuthError(MakerClientError):
    """The server refused the handshake: 401 `unauthorized` (missing, bad, suspended or revoked
    key) or 403 `forbidden` (not a maker credential with `maker:stream`). Never retried."""

    def __init__(self, status: int, request_id: str | None = None) -> None:
        self.status = status
        self.code = "unauthorized" if status == 401 else "forbidden"
        self.request_id = request_id
        detail = f" (request {request_id})" if request_id else ""
        super().__init__(f"maker stream handshake refused: HTTP {status} {self.code}{detail}")


class MakerConnectionError(MakerClientError):
    """No connection could be made (reconnect disabled, or `start()` timed out)."""


class MakerReplaced(MakerClientError):
    """The server closed this connection with 4001 `replaced`: the same key connected again
    elsewhere. The client does not fight back by reconnecting."""


@dataclass(frozen=True)
class Backoff:
    """Reconnect delays: initial_s * factor**attempt, capped at max_s, +/- jitter fraction."""

    initial_s: float = 0.05
    max_s: float = 5.0
    factor: float = 2.0
    jitter: float = 0.2

    def delay(self, attempt: int, rng: random.Random) -> float:
        base = min(self.max_s, self.initial_s * self.factor ** min(attempt, 64))
        return max(0.0, base * (1 + self.jitter * (2 * rng.random() - 1)))


def stream_url(url: str) -> str:
    """The WebSocket URL from a simulator base URL (`http://host:port`) or a ws(s) URL;
    the stream path is added when the URL has none."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    if scheme not in ("ws", "wss"):
        raise ValueError(f"not an http(s) or ws(s) URL: {url!r}")
    path = parts.path.rstrip("/") or STREAM_PATH
    if path != STREAM_PATH and not path.endswith(STREAM_PATH):
        path = path + STREAM_PATH
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


async def open_stream(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], timeout_s: float
) -> aiohttp.ClientWebSocketResponse:
    """The WebSocket handshake; MakerAuthError on 401/403 (never worth retrying)."""
    try:
        async with asyncio.timeout(timeout_s):
            return await session.ws_connect(
                url,
                headers=headers,
                autoping=True,  # WebSocket-level pings; the JSON pings are the client's
                timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=2.0),
            )
    except aiohttp.WSServerHandshakeError as exc:
        if exc.status in (401, 403):
            request_id = exc.headers.get("X-Request-Id") if exc.headers else None
            raise MakerAuthError(exc.status, request_id) from exc
        raise


async def receive_welcome(ws: aiohttp.ClientWebSocketResponse, timeout_s: float) -> Welcome:
    """The first frame, which must be a `welcome`; ProtocolError otherwise."""
    async with asyncio.timeout(timeout_s):
        msg = await ws.receive()
    if msg.type != aiohttp.WSMsgType.TEXT:
        raise ProtocolError(f"expected a welcome, got a {msg.type.name} frame")
    message = parse_server_message(msg.data)
    if not isinstance(message, Welcome):
        raise ProtocolError(f"expected a welcome, got {message.type}")
    return message
