"""Small https receivers of webhooks, for the `rfqsim webhooks listen` command, the load tests'
sink and tests: :class:`AsyncReceiver`, an aiohttp https (or http) server recording every
request raw; :class:`WebhookReceiver`, the same on a background thread for synchronous tests,
which can answer scripted statuses (500, ...), hang, and be stopped and restarted on the same
port. Signatures are checked with rfqkit/webhook_signatures.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import tempfile
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aiohttp import web

from rfqkit.webhook_signatures import EVENT_ID_HEADER, SIGNATURE_HEADER, signature_problem

LOOPBACK_HOSTNAMES = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str  # path and query as sent
    headers: tuple[tuple[str, str], ...]  # as received, in order
    raw_body: bytes  # exactly the bytes received
    received_at: float  # this machine's clock

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)

    def json(self) -> Any:
        return json.loads(self.raw_body)


def _is_about(received: ReceivedRequest, event_type: str, object_id: str) -> bool:
    """Whether a delivery is the ``event_type`` event about the object ``object_id``."""
    try:
        body = received.json()
    except ValueError:
        return False
    if not isinstance(body, dict) or body.get("type") != event_type:
        return False
    data = body.get("data")
    objects = data.values() if isinstance(data, dict) else ()
    return any(isinstance(o, dict) and o.get("id") == object_id for o in objects)


def _signed_with(received: ReceivedRequest, secret: str) -> bool:
    """Whether the delivery's Service-Signature is the HMAC of its body under ``secret``
    (whenever it was signed: freshness is the caller's check)."""
    header = received.header(SIGNATURE_HEADER)
    return signature_problem(secret, header, received.raw_body, tolerance=0) is None


Responder = Callable[[ReceivedRequest], Awaitable[int]]


def server_ssl_context(cert_pem: str | bytes, key_pem: str | bytes) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory(prefix="rfqsim-receiver-") as directory:
        cert_file, key_file = Path(directory, "cert.pem"), Path(directory, "key.pem")
        cert_file.write_bytes(cert_pem.encode() if isinstance(cert_pem, str) else cert_pem)
        key_file.write_bytes(key_pem.encode() if isinstance(key_pem, str) else key_pem)
        key_file.chmod(0o600)
        context.load_cert_chain(cert_file, key_file)
    return context


def _raw_headers(request: web.Request) -> Iterable[tuple[str, str]]:
    """Header names and values exactly as they came (aiohttp keeps the raw bytes)."""
    return ((k.decode("latin-1"), v.decode("latin-1")) for k, v in request.raw_headers)


async def _acknowledge(_: ReceivedRequest) -> int:
    return 200


class AsyncReceiver:
    """Records every request on any path and answers what ``respond`` says (default 200).
    https when given a certificate, else plain http. The first start binds ``port`` (0: a free
    one); later starts bind that same port again."""

    def __init__(
        self,
        *,
        cert_pem: str | bytes | None = None,
        key_pem: str | bytes | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/webhooks",
        respond: Responder | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.path = path
        self.respond = respond or _acknowledge
        self.requests: list[ReceivedRequest] = []  # every request, in arrival order
        self._ssl = server_ssl_context(cert_pem, key_pem) if cert_pem and key_pem else None
        self._runner: web.AppRunner | None = None  # set while serving

    @property
    def scheme(self) -> str:
        return "https" if self._ssl is not None else "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def _handle(self, request: web.Request) -> web.Response:
        received = ReceivedRequest(
            method=request.method,
            path=request.path_qs,
            headers=tuple(_raw_headers(request)),
            raw_body=await request.read(),
            received_at=time.time(),
        )
        self.requests.append(received)
        status = await self.respond(received)
        return web.Response(status=status, text="ok" if 200 <= status < 300 else "not ok")

    async def start(self) -> None:
        if self._runner is not None:
            return
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, ssl_context=self._ssl, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self.port = int(runner.addresses[0][1])
        self._runner = runner

    async def stop(self) -> None:
        """Go down abruptly, like a crashed receiver: open connections are reset (no graceful
        TLS shutdown that would wait on the peer), and the port refuses connections until the
        next start."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        if runner.server is not None:
            for handler in runner.server.connections:
                if handler.transport is not None:
                    handler.transport.abort()
        await runner.cleanup()
        await asyncio.sleep(0)  # let the aborted transports close their sockets


Behaviour = int | Literal["hang"]


class WebhookReceiver:
    """:class:`AsyncReceiver` on its own event-loop thread, for synchronous tests.

    ``respond_with(500, "hang", 200)`` scripts the next answers (then ``default_status``); a hang
    holds the request until ``hang_seconds`` pass or the receiver stops. Use as a context
    manager, or call :meth:`close`."""

    def __init__(
        self,
        cert_pem: str | bytes | None = None,
        key_pem: str | bytes | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/webhooks",
        hang_seconds: float = 30.0,
    ) -> None:
        self.default_status = 200
        self.hang_seconds = hang_seconds
        self._lock = threading.Lock()  # guards _script across the test and server threads
        self._script: deque[Behaviour] = deque()  # next answers, then default_status
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="webhook-receiver", daemon=True
        )
        self._thread.start()
        self._released: asyncio.Event | None = None  # set on stop: hanging requests end
        try:
            self._server: AsyncReceiver = self._call(
                self._make(cert_pem, key_pem, host, port, path)
            )
        except BaseException:
            self._shutdown_loop()
            raise

    async def _make(
        self,
        cert_pem: str | bytes | None,
        key_pem: str | bytes | None,
        host: str,
        port: int,
        path: str,
    ) -> AsyncReceiver:
        self._released = asyncio.Event()
        return AsyncReceiver(
            cert_pem=cert_pem,
            key_pem=key_pem,
            host=host,
            port=port,
            path=path,
            respond=self._answer,
        )

    def _call(self, coroutine: Awaitable[Any], timeout: float = 15.0) -> Any:
        async def wrapped() -> Any:
            return await coroutine

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result(timeout)

    async def _answer(self, _: ReceivedRequest) -> int:
        with self._lock:
            behaviour = self._script.popleft() if self._script else self.default_status
        if behaviour == "hang":
            assert self._released is not None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.hang_seconds):
                    await self._released.wait()
            return 503
        return behaviour

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def port(self) -> int:
        return self._server.port

    def respond_with(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._script.extend(behaviours)

    def start(self) -> WebhookReceiver:
        async def start() -> None:
            self._released = asyncio.Event()
            await self._server.start()

        self._call(start())
        return self

    def stop(self) -> None:
        async def stop() -> None:
            if self._released is not None:
                self._released.set()
            await self._server.stop()

        self._call(stop())

    def restart(self) -> WebhookReceiver:
        """Serve again on the same port."""
        return self.start()

    @property
    def requests(self) -> list[ReceivedRequest]:
        async def snapshot() -> list[ReceivedRequest]:
            return list(self._server.requests)

        result: list[ReceivedRequest] = self._call(snapshot())
        return result

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[ReceivedRequest]:
        """At least ``count`` requests received (fails after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.requests
            if len(got) >= count:
                return got
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"webhook receiver got {len(got)} request(s), expected {count}, "
                    f"within {timeout:.1f}s"
                )
            time.sleep(0.05)

    def wait_for_events(self, count: int, timeout: float = 10.0) -> list[ReceivedRequest]:
        """At least ``count`` distinct events: the first delivery of each `Service-Event-Id`,
        in the order received. Delivery is at-least-once, so a retry of an event already
        received (its first answer lost or late) is not another event."""
        deadline = time.monotonic() + timeout
        while True:
            first: dict[str | None, ReceivedRequest] = {}
            for received in self.requests:
                first.setdefault(received.header(EVENT_ID_HEADER), received)
            if len(first) >= count:
                return list(first.values())
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"webhook receiver got {len(first)} event(s), expected {count}, "
                    f"within {timeout:.1f}s"
                )
            time.sleep(0.05)

    def wait_for_event(
        self,
        event_type: str,
        object_id: str,
        count: int = 1,
        timeout: float = 10.0,
        *,
        secret: str | None = None,
    ) -> list[ReceivedRequest]:
        """The first ``count`` deliveries of the ``event_type`` event about one object: the body's
        ``type`` and the ``id`` of its ``data`` object (data.rfq, data.swap, data.limitOrder).
        Deliveries about other objects (another test's, on a receiver several senders share)
        are left alone; a retry of the same event counts again. With ``secret``, only the
        deliveries signed with it: several endpoints of one partner on one receiver each get
        the event, each signed with its own endpoint's secret."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.requests
            about = [r for r in got if _is_about(r, event_type, object_id)]
            mine = [r for r in about if secret is None or _signed_with(r, secret)]
            if len(mine) >= count:
                return mine[:count]
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"{len(mine)} of {count} deliveries of {event_type} about {object_id} "
                    + ("signed with this endpoint's secret " if secret is not None else "")
                    + f"within {timeout:.1f}s ({len(about) - len(mine)} signed with another "
                    f"secret, {len(got) - len(about)} other request(s) received)"
                )
            time.sleep(0.05)

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self.stop()
        finally:
            self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        async def drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.sleep(0.01)  # transports close their sockets on the next turns

        with contextlib.suppress(Exception):
            self._call(drain(), timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()
