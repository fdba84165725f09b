"""The reverse proxy itself: every request forwarded to the upstream as the client sent it
(method, path and query as raw bytes, headers but the hop-by-hop ones, the body streamed as it
arrives, the client's IP appended to ``X-Forwarded-For``), every answer returned as the upstream
sent it (status and reason, headers, body bytes, Content-Encoding untouched) plus one header,
``X-Rfqsim-Violations``, on an answer where the checks found something. WebSocket upgrades
(the maker stream) are relayed frame by frame both ways, pings and close codes included.

To put the header on an answer the proxy must have checked it before sending it: a JSON answer
of a spec surface is read whole first (up to :data:`CHECK_LIMIT`); anything else, and every
answer under ``--no-header``, streams through at once and is checked after its last byte.

An upstream that cannot be reached is answered 502 ``upstream_error`` in the spec's envelope
(the feed's ``{error}`` on the feed's paths) and reported; the proxy itself keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import secrets
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import hdrs, web
from multidict import CIMultiDict
from yarl import URL

from conformance.wire.client import Headers
from rfqkit.local_guard import origin_of
from rfqsim.proxy.exchange import ProxiedExchange, is_json_type
from rfqsim.proxy.findings import Findings
from rfqsim.proxy.spec import surface_of
from rfqsim.proxy.watcher import CHECKED_SURFACES, Watcher

VIOLATIONS_HEADER = "X-Rfqsim-Violations"
CHECK_LIMIT = 8 * 1024 * 1024  # bytes of a body kept for the checks (ramp KYC images: 3 x 4 MB)
CHUNK = 64 * 1024
DEFAULT_READ_TIMEOUT_S = 30.0  # `--upstream-timeout`: an upstream silent this long is a 502
# RFC 9110 7.6.1: meaningful for one connection only, never forwarded.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
# Written afresh for the upstream connection (Host from the upstream URL) or the answer's
# framing (Content-Length by aiohttp from the bytes it sends).
REQUEST_REWRITTEN = frozenset({"host"})
ANSWER_REWRITTEN = frozenset({"content-length"})
# The WebSocket handshake's own headers: each hop negotiates its own.
WEBSOCKET_HANDSHAKE = frozenset(
    {
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-extensions",
        "sec-websocket-accept",
        "sec-websocket-protocol",
    }
)
# Defaults aiohttp writes on an answer that lacks them; removed again when the upstream's had
# none, so the answer is the upstream's.
SERVER_DEFAULTS = ("Date", "Server", "Content-Type")
_HANDSHAKE: contextvars.ContextVar[_Handshake | None] = contextvars.ContextVar(
    "rfqsim_proxy_handshake", default=None
)


def _connection_listed(headers: Any) -> set[str]:
    """Header names a Connection header lists (hop-by-hop for this message too)."""
    listed: set[str] = set()
    for value in headers.getall(hdrs.CONNECTION, []):
        listed.update(part.strip().lower() for part in value.split(",") if part.strip())
    return listed


def forwardable(headers: Any, dropped: frozenset[str]) -> list[tuple[str, str]]:
    skip = HOP_BY_HOP | dropped | _connection_listed(headers)
    return [(name, value) for name, value in headers.items() if name.lower() not in skip]


class _UpstreamHeaders(web.StreamResponse):
    """An answer whose headers are the upstream's: aiohttp's defaults for a missing Date,
    Server or Content-Type are taken out again (``_prepare_headers`` is where aiohttp adds
    them; aiohttp is pinned, 3.14)."""

    def __init__(self, *, absent: Iterable[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._absent = tuple(absent)

    async def _prepare_headers(self) -> None:
        await super()._prepare_headers()
        for name in self._absent:
            self.headers.popall(name, None)


class _Relayed(_UpstreamHeaders, web.Response):
    """A whole answer, sent at once."""


class _RelayedStream(_UpstreamHeaders):
    """An answer sent as its bytes arrive."""


class _BodyTee:
    """The request body streamed to the upstream as it arrives, its first CHECK_LIMIT bytes
    kept for the checks; ``complete`` once it was read to its end within the limit."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.kept = bytearray()
        self.ended = False
        self.overflow = False

    async def chunks(self) -> AsyncIterator[bytes]:
        async for chunk in self.request.content.iter_chunked(CHUNK):
            room = CHECK_LIMIT - len(self.kept)
            if len(chunk) > room:
                self.overflow = True
            self.kept += chunk[: max(room, 0)]
            yield chunk
        self.ended = True

    @property
    def complete(self) -> bool:
        return self.ended and not self.overflow


@dataclass
class _Handshake:
    """A WebSocket upgrade the upstream refused: its answer, read before aiohttp drops it."""

    status: int = 0
    reason: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


async def _capture_refusal(
    session: aiohttp.ClientSession, context: Any, params: aiohttp.TraceRequestEndParams
) -> None:
    holder = _HANDSHAKE.get()
    response = params.response
    if holder is None:
        return
    holder.status, holder.reason = response.status, response.reason or ""
    holder.headers = list(response.headers.items())
    if response.status != 101:
        holder.body = await response.read()


def own_error(
    path: str, status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> web.Response:
    """An answer of the proxy itself: the spec's envelope with a request id of its own (the
    feed's `{error: "<string>"}` on the feed's paths)."""
    request_id = "req_" + secrets.token_hex(12)
    if surface_of(path) == "feed":
        body: dict[str, Any] = {"error": message}
    else:
        error: dict[str, Any] = {"code": code, "message": message, "request_id": request_id}
        if details is not None:
            error["details"] = details
        body = {"error": error}
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        content_type="application/json",
        headers={"X-Request-Id": request_id},
    )


class Forwarder:
    """The proxy's one handler (``*`` on every path) and its upstream sessions."""

    def __init__(
        self,
        upstream: str,
        watcher: Watcher,
        findings: Findings,
        *,
        header: bool = True,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        self.upstream = URL(upstream.rstrip("/"))
        self.watcher = watcher
        self.findings = findings
        self.header = header
        self.read_timeout_s = read_timeout_s
        self._session: aiohttp.ClientSession | None = None
        self._ws_session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        # Every read from the upstream (the answer's head, each part of its body) waits at most
        # read_timeout_s; a WebSocket may stay quiet as long as both ends like.
        self._session = self._new_session(read_timeout_s=self.read_timeout_s)
        tracing = aiohttp.TraceConfig()
        tracing.on_request_end.append(_capture_refusal)
        self._ws_session = self._new_session(tracing)

    @staticmethod
    def _new_session(
        tracing: aiohttp.TraceConfig | None = None, read_timeout_s: float | None = None
    ) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=read_timeout_s),
            auto_decompress=False,  # bytes are relayed as sent, encoding and all
            cookie_jar=aiohttp.DummyCookieJar(),  # one client's cookies are no other's
            trust_env=False,
            skip_auto_headers=(hdrs.USER_AGENT,),
            trace_configs=[tracing] if tracing is not None else None,
        )

    async def close(self) -> None:
        for session in (self._session, self._ws_session):
            if session is not None:
                await session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None, "Forwarder.start() first"
        return self._session

    def _url(self, request: web.Request) -> URL:
        return URL(str(self.upstream) + request.rel_url.raw_path_qs, encoded=True)

    def _request_headers(self, request: web.Request, dropped: frozenset[str]) -> CIMultiDict[str]:
        headers = CIMultiDict(forwardable(request.headers, REQUEST_REWRITTEN | dropped))
        peer = request.remote or "unknown"
        earlier = ", ".join(request.headers.getall("X-Forwarded-For", []))
        headers.popall("X-Forwarded-For", None)
        headers["X-Forwarded-For"] = f"{earlier}, {peer}" if earlier else peer
        origin = headers.get(hdrs.ORIGIN)
        if origin is not None and origin_of(origin) == origin_of(
            f"{request.scheme}://{request.host}"
        ):
            # A page the proxy served (the console through it) is the upstream's own page: its
            # control requests must not be refused upstream as another origin's.
            headers[hdrs.ORIGIN] = str(self.upstream.origin())
        return headers

    def _exchange(self, request: web.Request) -> ProxiedExchange:
        return ProxiedExchange(
            method=request.method,
            path=request.path,
            query_string=request.rel_url.raw_query_string,
            request_headers=Headers(request.headers.items()),
            request_body=b"",
            client_ip=request.remote or "unknown",
        )

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get(hdrs.UPGRADE, "").lower() == "websocket":
            return await self._websocket(request)
        exchange = self._exchange(request)
        tee = _BodyTee(request)
        try:
            answer = await self.session.request(
                request.method,
                self._url(request),
                headers=self._request_headers(request, frozenset()),
                data=tee.chunks() if request.body_exists else None,
                allow_redirects=False,
                skip_auto_headers=(hdrs.CONTENT_TYPE, hdrs.ACCEPT, hdrs.ACCEPT_ENCODING),
            )
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            self._request_seen(exchange, tee, request)
            return self._unreachable(exchange, exc)
        self._request_seen(exchange, tee, request)
        async with answer:
            if self.header and self._checked_json(exchange, answer):
                return await self._buffered(request, exchange, answer)
            return await self._streamed(request, exchange, answer)

    @staticmethod
    def _request_seen(exchange: ProxiedExchange, tee: _BodyTee, request: web.Request) -> None:
        exchange.request_body = bytes(tee.kept)
        # A body the upstream answered before it was read to its end is only partly known:
        # it is not judged.
        exchange.request_complete = tee.complete or not request.body_exists

    @staticmethod
    def _checked_json(exchange: ProxiedExchange, answer: aiohttp.ClientResponse) -> bool:
        length = answer.content_length
        return (
            exchange.surface in CHECKED_SURFACES
            and is_json_type(answer.headers.get(hdrs.CONTENT_TYPE))
            and (length is None or length <= CHECK_LIMIT)
        )

    def _answer_headers(
        self, answer: aiohttp.ClientResponse, method: str
    ) -> tuple[CIMultiDict[str], list[str]]:
        # HEAD and bodiless statuses keep the upstream's Content-Length: it describes the
        # resource, not the (empty) message.
        keep_length = method == "HEAD" or answer.status in (204, 304)
        dropped = frozenset() if keep_length else ANSWER_REWRITTEN
        headers = CIMultiDict(forwardable(answer.headers, dropped))
        absent = [name for name in SERVER_DEFAULTS if name not in answer.headers]
        return headers, absent

    async def _buffered(
        self, request: web.Request, exchange: ProxiedExchange, answer: aiohttp.ClientResponse
    ) -> web.StreamResponse:
        body = bytearray()
        complete = True
        try:
            async for chunk in answer.content.iter_chunked(CHUNK):
                body += chunk
                if len(body) > CHECK_LIMIT:
                    complete = False
                    break
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            return self._unreachable(exchange, exc)
        headers, absent = self._answer_headers(answer, request.method)
        if not complete:  # larger than announced: stream the rest, checked without a header
            exchange.answer(
                answer.status, answer.reason or "", answer.headers.items(), b"", complete=False
            )
            return await self._stream_from(request, exchange, answer, headers, absent, bytes(body))
        exchange.answer(answer.status, answer.reason or "", answer.headers.items(), bytes(body))
        inspection = self.watcher.inspect(exchange)
        if inspection.found:
            headers.add(VIOLATIONS_HEADER, ", ".join(inspection.rules_found))
        return _Relayed(
            status=answer.status,
            reason=answer.reason,
            headers=headers,
            body=bytes(body),
            absent=absent,
        )

    async def _streamed(
        self, request: web.Request, exchange: ProxiedExchange, answer: aiohttp.ClientResponse
    ) -> web.StreamResponse:
        headers, absent = self._answer_headers(answer, request.method)
        return await self._stream_from(request, exchange, answer, headers, absent, b"")

    async def _stream_from(
        self,
        request: web.Request,
        exchange: ProxiedExchange,
        answer: aiohttp.ClientResponse,
        headers: CIMultiDict[str],
        absent: list[str],
        first: bytes,
    ) -> web.StreamResponse:
        response = _RelayedStream(
            status=answer.status, reason=answer.reason, headers=headers, absent=absent
        )
        if answer.content_length is not None and request.method != "HEAD":
            response.content_length = answer.content_length
        await response.prepare(request)
        kept = bytearray(first[:CHECK_LIMIT])
        complete = len(first) <= CHECK_LIMIT
        if first:
            await response.write(first)
        try:
            async for chunk in answer.content.iter_any():
                if complete and len(kept) + len(chunk) <= CHECK_LIMIT:
                    kept += chunk
                else:
                    complete = False
                await response.write(chunk)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            self.findings.upstream_failed(request.method, request.path, f"answer cut: {exc}")
            raise
        await response.write_eof()
        exchange.answer(
            answer.status,
            answer.reason or "",
            answer.headers.items(),
            bytes(kept),
            complete=complete,
        )
        self.watcher.inspect(exchange)
        return response

    def _unreachable(self, exchange: ProxiedExchange, exc: BaseException) -> web.Response:
        """502 in the spec's envelope (the feed's own on its paths), with a request id."""
        if isinstance(exc, aiohttp.SocketTimeoutError):  # a read, not the connect
            self.findings.upstream_failed(
                exchange.method,
                exchange.path,
                f"the upstream sent nothing for {self.read_timeout_s:g} s (--upstream-timeout)",
            )
            message = (
                f"The upstream service did not answer within {self.read_timeout_s:g} s "
                "through rfqsim proxy"
            )
            details = {"reason": "upstream_timeout", "timeoutS": self.read_timeout_s}
            return own_error(exchange.path, 502, "upstream_error", message, details)
        self.findings.upstream_failed(
            exchange.method, exchange.path, f"{type(exc).__name__}: {exc}"
        )
        message = "The upstream service could not be reached through rfqsim proxy"
        return own_error(exchange.path, 502, "upstream_error", message)

    # -- WebSocket ------------------------------------------------------------------------

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        assert self._ws_session is not None
        exchange = self._exchange(request)
        holder = _Handshake()
        token = _HANDSHAKE.set(holder)
        protocols = [
            p.strip()
            for value in request.headers.getall(hdrs.SEC_WEBSOCKET_PROTOCOL, [])
            for p in value.split(",")
            if p.strip()
        ]
        try:
            upstream = await self._ws_session.ws_connect(
                self._url(request).with_scheme("wss" if self.upstream.scheme == "https" else "ws"),
                headers=self._request_headers(request, WEBSOCKET_HANDSHAKE),
                protocols=protocols,
                autoping=False,  # pings and pongs are relayed, not answered here
                max_msg_size=0,
                compress=0,
            )
        except aiohttp.WSServerHandshakeError:
            return self._refused(request, exchange, holder)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            return self._unreachable(exchange, exc)
        finally:
            _HANDSHAKE.reset(token)
        async with upstream:
            downstream = web.WebSocketResponse(
                protocols=[upstream.protocol] if upstream.protocol else (),
                autoping=False,
                max_msg_size=0,
                compress=False,
            )
            skip = HOP_BY_HOP | WEBSOCKET_HANDSHAKE | ANSWER_REWRITTEN
            for name, value in holder.headers:
                if name.lower() not in skip:
                    downstream.headers.add(name, value)
            await downstream.prepare(request)
            exchange.answer(101, "Switching Protocols", holder.headers, b"")
            self.watcher.inspect(exchange)
            await asyncio.gather(
                _pump(upstream, downstream), _pump(downstream, upstream), return_exceptions=True
            )
        return downstream

    def _refused(
        self, request: web.Request, exchange: ProxiedExchange, holder: _Handshake
    ) -> web.StreamResponse:
        exchange.answer(holder.status, holder.reason, holder.headers, holder.body)
        inspection = self.watcher.inspect(exchange)
        headers = CIMultiDict(forwardable(CIMultiDict(holder.headers), ANSWER_REWRITTEN))
        if inspection.found and self.header:
            headers.add(VIOLATIONS_HEADER, ", ".join(inspection.rules_found))
        absent = [name for name in SERVER_DEFAULTS if name not in CIMultiDict(holder.headers)]
        return _Relayed(
            status=holder.status,
            reason=holder.reason,
            headers=headers,
            body=holder.body,
            absent=absent,
        )


_CLOSE_UNSENDABLE = frozenset({1005, 1006, 1015})  # reserved: never sent in a close frame


async def _pump(source: Any, sink: Any) -> None:
    """Frames from one side to the other, as they come; a close is passed on with its code."""
    try:
        async for message in source:
            kind = message.type
            if kind == aiohttp.WSMsgType.TEXT:
                await sink.send_str(message.data)
            elif kind == aiohttp.WSMsgType.BINARY:
                await sink.send_bytes(message.data)
            elif kind == aiohttp.WSMsgType.PING:
                await sink.ping(message.data)
            elif kind == aiohttp.WSMsgType.PONG:
                await sink.pong(message.data)
            else:
                break
    finally:
        code = source.close_code or 1000
        with contextlib.suppress(Exception):
            await sink.close(code=1000 if code in _CLOSE_UNSENDABLE else code)
