"""Maker-side client of the maker stream (`/v2/maker/stream`, docs/maker-protocol.md).

Usable by an integrator's own maker bot::

    async def on_rfq(rfq: Rfq) -> Quote | Decline | None:
        ...  # price, sign with contracts.orders.sign_order, return Quote(...)

    async with MakerClient("http://127.0.0.1:8080", key, on_rfq=on_rfq) as client:
        await client.publish_levels(56, usdt, ngns, [(10**18, 1_599_000_000)])
        await asyncio.Event().wait()

What it does for you: the handshake with `Authorization: Bearer <key>` (401/403 raise
MakerAuthError at once, never retried), the `welcome`, answering server pings, one task per
`rfq` running your handler and sending its Quote/Decline (None = stay silent), callbacks for
`filled`/`expired`/`released`/`error`, `levels` coalesced to the server's
`levelsMinIntervalMs` per direction (makers.levels: unchanged levels are not repeated until half
of `levelsMaxAgeMs` has passed, unless asked), `sync()` (a ping whose pong proves the server has
read every frame sent before it), a dead server detected (no frame for 2.5 ping intervals) and
reconnection with exponential backoff until `close()`, which cancels and awaits every task it
started. The URL, backoff, handshake and errors live in makers.stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeVar

import aiohttp

from makers.levels import LevelsCoalescer, LevelsInput, check_levels
from makers.stream import (
    STREAM_PATH,
    Backoff,
    MakerAuthError,
    MakerClientError,
    MakerConnectionError,
    MakerReplaced,
    open_stream,
    receive_welcome,
    stream_url,
)
from rfqkit.maker_protocol import (
    CLOSE_REPLACED,
    Decline,
    ErrorMessage,
    Expired,
    Filled,
    MakerMessage,
    MakerQuote,
    Message,
    Ping,
    Pong,
    ProtocolError,
    Released,
    Rfq,
    ServerMessage,
    Welcome,
    WelcomePair,
    parse_server_message,
    serialize,
)
from rfqkit.tasks import cancel_others

__all__ = [
    "STREAM_PATH",
    "Backoff",
    "Decline",
    "MakerAuthError",
    "MakerClient",
    "MakerClientError",
    "MakerConnectionError",
    "MakerQuote",
    "MakerReplaced",
    "RfqHandler",
    "stream_url",
]

log = logging.getLogger(__name__)


T = TypeVar("T")
Callback = Callable[[T], Awaitable[None]]
RfqHandler = Callable[[Rfq], Awaitable["MakerQuote | Decline | None"]]


@dataclass
class _Connection:
    ws: aiohttp.ClientWebSocketResponse
    welcome: Welcome
    levels: LevelsCoalescer
    rfq_tasks: set[asyncio.Task[Any]] = field(default_factory=set)  # die with the socket
    pongs: dict[str, asyncio.Future[None]] = field(default_factory=dict)  # sync() ping ids


class MakerClient:
    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        on_rfq: RfqHandler | None = None,
        on_welcome: Callback[Welcome] | None = None,
        on_filled: Callback[Filled] | None = None,
        on_expired: Callback[Expired] | None = None,
        on_released: Callback[Released] | None = None,
        on_error: Callback[ErrorMessage] | None = None,
        on_disconnect: Callable[[], Awaitable[None]] | None = None,
        reconnect: bool = True,
        backoff: Backoff | None = None,
        session: aiohttp.ClientSession | None = None,
        auth_header: Literal["authorization", "x-api-key"] = "authorization",
        connect_timeout_s: float = 10.0,
        rng: random.Random | None = None,
        name: str | None = None,
    ) -> None:
        self.url = stream_url(url)
        self.name = name or "maker"
        self._api_key = api_key
        self._on_rfq = on_rfq
        self._on_welcome = on_welcome
        self._on_filled = on_filled
        self._on_expired = on_expired
        self._on_released = on_released
        self._on_error = on_error
        self._on_disconnect = on_disconnect
        self.reconnect = reconnect
        self.backoff = backoff or Backoff()
        self._session = session
        self._own_session = session is None
        self._auth_header = auth_header
        self._connect_timeout_s = connect_timeout_s
        self._rng = rng or random.Random()  # backoff jitter only
        self._conn: _Connection | None = None  # the live connection, after its welcome
        self._welcome: Welcome | None = None  # the latest welcome (kept while reconnecting)
        self._clock_offset_ms = 0.0  # server time minus local time, from the latest welcome
        self._connected = asyncio.Event()  # set while a welcomed connection is open
        self._fatal: BaseException | None = None  # why the run loop gave up for good
        self._stopped = asyncio.Event()  # set when the run loop has ended
        self._run_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()  # callbacks, handlers, level flushers
        self._send_lock = asyncio.Lock()  # one frame at a time on the socket
        self._closing = False
        self.connections = 0  # welcomed connections so far (1 + reconnects)
        self._syncs = 0  # sync() pings sent so far (their ids)

    # ---- state ------------------------------------------------------------------------------

    @property
    def welcome(self) -> Welcome | None:
        """The latest `welcome` (None before the first one)."""
        return self._welcome

    @property
    def connected(self) -> bool:
        return self._conn is not None

    @property
    def chains(self) -> list[int]:
        return [] if self._welcome is None else [c.chain_id for c in self._welcome.chains]

    def pairs(self, chain_id: int) -> list[WelcomePair]:
        chain = None if self._welcome is None else self._welcome.chain(chain_id)
        return [] if chain is None else list(chain.pairs)

    def server_time_ms(self) -> int:
        """Estimate of the server's clock, from the latest welcome's `serverTimeMs`."""
        return int(time.time() * 1000 + self._clock_offset_ms)

    # ---- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> MakerClient:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self, wait_s: float | None = 30.0) -> Welcome:
        """Connect and wait for the first `welcome`. Raises MakerAuthError on 401/403,
        MakerConnectionError if no connection came up within `wait_s` seconds (or at the first
        failure when reconnect is off); the client is then closed. Once started it keeps
        (re)connecting in the background until close()."""
        if self._closing:
            raise MakerClientError(f"{self.name}: the client is closed")
        if self._run_task is None:
            if self._session is None:
                self._session = aiohttp.ClientSession()
            self._stopped.clear()
            self._run_task = asyncio.create_task(self._run(), name=f"maker-stream:{self.name}")
        try:
            return await self.wait_connected(wait_s)
        except BaseException:
            await self.close()  # no half-started client: nothing left running, session closed
            raise

    async def wait_connected(self, wait_s: float | None = None) -> Welcome:
        connected = asyncio.ensure_future(self._connected.wait())
        stopped = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({connected, stopped}, timeout=wait_s, return_when="FIRST_COMPLETED")
        finally:
            for waiter in (connected, stopped):
                waiter.cancel()
            await asyncio.gather(connected, stopped, return_exceptions=True)
        if self._conn is not None:
            return self._conn.welcome
        if self._fatal is not None:
            raise self._fatal
        raise MakerConnectionError(f"{self.name}: no maker stream connection to {self.url}")

    async def close(self) -> None:
        """Stop reconnecting, close the socket, cancel and await every task (idempotent)."""
        self._closing = True
        if self._run_task is not None:
            self._run_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._run_task
        await cancel_others(self._tasks)
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None

    stop = close

    # ---- sending ----------------------------------------------------------------------------

    async def send(self, message: MakerMessage) -> bool:
        """Send one message on the live connection; False if there is none or it broke."""
        conn = self._conn
        if conn is None:
            return False
        return await self._send_on(conn, message)

    async def _send_on(self, conn: _Connection, message: Message) -> bool:
        return await self._send_text(conn, serialize(message))

    async def _send_text(self, conn: _Connection, text: str) -> bool:
        if conn.ws.closed:
            return False
        try:
            async with self._send_lock:
                await conn.ws.send_str(text)
        except (ConnectionError, aiohttp.ClientError, RuntimeError) as exc:
            log.info("%s: send failed: %s", self.name, exc)
            return False
        return True

    async def send_quote(self, quote: MakerQuote) -> bool:
        return await self.send(quote)

    async def send_decline(
        self, quote_id: str, reason: str, max_sell_amount: int | None = None
    ) -> bool:
        decline = Decline.model_validate(
            {"quoteId": quote_id, "reason": reason, "maxSellAmount": max_sell_amount}
        )
        return await self.send(decline)

    async def ping(self, ping_id: str | int) -> bool:
        return await self.send(Ping(id=ping_id))

    async def sync(self, wait_s: float | None = 10.0) -> None:
        """Return once the server has read every frame sent on this connection before the call:
        a ping of our own, answered by a pong with its id (the server reads a connection's frames
        in order and answers a ping after everything before it). MakerConnectionError when there
        is no connection or it closes first; TimeoutError after `wait_s`."""
        conn = self._conn
        if conn is None:
            raise MakerConnectionError(f"{self.name}: not connected")
        self._syncs += 1
        ping_id = f"sync-{self._syncs}"
        answered = asyncio.get_running_loop().create_future()
        conn.pongs[ping_id] = answered
        try:
            if not await self._send_on(conn, Ping(id=ping_id)):
                raise MakerConnectionError(f"{self.name}: the connection closed")
            async with asyncio.timeout(wait_s):
                await answered
        finally:
            conn.pongs.pop(ping_id, None)

    async def publish_levels(
        self,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        levels: LevelsInput,
        *,
        resend_after_s: float | None = None,
    ) -> bool:
        """Publish this direction's levels (list of (sellAmount, buyAmount) or Level; at most
        nine, strictly increasing; [] withdraws). Faster than the server's levelsMinIntervalMs
        they are coalesced here, the newest winning, so the server never has to; levels equal
        to the last ones sent on this connection are not sent again until `resend_after_s`
        after that send (default: half the server's levelsMaxAgeMs, so they never go stale
        there). Returns False when not connected. ValueError (pydantic) for an invalid
        ladder."""
        update = check_levels(chain_id, sell_token, buy_token, levels)
        conn = self._conn
        if conn is None:
            return False
        welcome = conn.welcome
        if resend_after_s is None:
            resend_after_s = welcome.levels_max_age_ms / 2000
        return await conn.levels.publish(
            update, welcome.levels_min_interval_ms / 1000, resend_after_s
        )

    # ---- the connection loop ----------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        if self._auth_header == "x-api-key":
            return {"X-API-Key": self._api_key}
        return {"Authorization": f"Bearer {self._api_key}"}

    async def _run(self) -> None:
        attempt = 0
        try:
            while not self._closing:
                try:
                    welcomed = await self._connect_and_serve()
                except MakerAuthError as exc:
                    log.error("%s: %s", self.name, exc)
                    self._fatal = exc
                    return
                except MakerReplaced as exc:
                    log.warning("%s: %s", self.name, exc)
                    self._fatal = exc
                    return
                except (aiohttp.ClientError, OSError, TimeoutError, ProtocolError) as exc:
                    log.info("%s: maker stream connection failed: %s", self.name, exc)
                    self._fatal = MakerConnectionError(f"{self.name}: {self.url}: {exc}")
                    welcomed = False
                if welcomed:
                    attempt = 0
                if not self.reconnect:
                    self._fatal = self._fatal or MakerConnectionError(
                        f"{self.name}: connection closed and reconnect is off"
                    )
                    return
                delay = self.backoff.delay(attempt, self._rng)
                attempt += 1
                log.info("%s: reconnecting in %.2fs", self.name, delay)
                await asyncio.sleep(delay)
        finally:
            self._stopped.set()

    async def _connect_and_serve(self) -> bool:
        """One connection: handshake, welcome, then frames until it closes. True if it got as
        far as a welcome."""
        assert self._session is not None
        ws = await open_stream(self._session, self.url, self._headers(), self._connect_timeout_s)
        try:
            welcome = await receive_welcome(ws, self._connect_timeout_s)
            conn = self._new_connection(ws, welcome)
            self._adopt_welcome(welcome)
            self._conn = conn
            self.connections += 1
            self._connected.set()
            self._fatal = None
            if self._on_welcome is not None:
                self._spawn(self._on_welcome(welcome), "on_welcome")
            try:
                await self._serve(conn)
            finally:
                self._conn = None
                self._connected.clear()
                for waiting in conn.pongs.values():  # sync() on a connection that went away
                    if not waiting.done():
                        waiting.set_exception(
                            MakerConnectionError(f"{self.name}: the connection closed")
                        )
                await cancel_others(conn.rfq_tasks)
                conn.levels.cancel()
                if self._on_disconnect is not None and not self._closing:
                    self._spawn(self._on_disconnect(), "on_disconnect")
            if ws.close_code == CLOSE_REPLACED:
                raise MakerReplaced(f"{self.name}: connection replaced by another (4001)")
            log.info("%s: maker stream closed (code %s)", self.name, ws.close_code)
            return True
        finally:
            await ws.close()

    def _new_connection(self, ws: aiohttp.ClientWebSocketResponse, welcome: Welcome) -> _Connection:
        async def send(text: str) -> bool:
            return await self._send_text(conn, text)

        def spawn(flush: Coroutine[Any, Any, None], label: str) -> asyncio.Task[None]:
            task: asyncio.Task[None] = self._spawn(flush, label)
            return task

        conn = _Connection(ws=ws, welcome=welcome, levels=LevelsCoalescer(send, spawn))
        return conn

    def _adopt_welcome(self, welcome: Welcome) -> None:
        self._welcome = welcome
        self._clock_offset_ms = welcome.server_time_ms - time.time() * 1000

    async def _serve(self, conn: _Connection) -> None:
        # A server that pings every pingIntervalMs and sends nothing for 2.5 intervals is gone.
        silence_s = max(1.0, 2.5 * conn.welcome.ping_interval_ms / 1000)
        while True:
            try:
                async with asyncio.timeout(silence_s):
                    msg = await conn.ws.receive()
            except TimeoutError:
                log.warning("%s: no frame for %.1fs, dropping the connection", self.name, silence_s)
                return
            if msg.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSING,
                aiohttp.WSMsgType.CLOSED,
                aiohttp.WSMsgType.ERROR,
            ):
                return
            if msg.type != aiohttp.WSMsgType.TEXT:
                log.warning("%s: ignoring a %s frame", self.name, msg.type.name)
                continue
            try:
                message = parse_server_message(msg.data)
            except ProtocolError as exc:
                log.warning("%s: ignoring a bad server frame: %s %s", self.name, exc, exc.issues)
                continue
            await self._dispatch(conn, message)

    async def _dispatch(self, conn: _Connection, message: ServerMessage) -> None:
        if isinstance(message, Ping):
            await self._send_on(conn, Pong(id=message.id))
        elif isinstance(message, Rfq):
            task = self._spawn(self._answer(conn, message), f"rfq:{message.quote_id}")
            conn.rfq_tasks.add(task)
            task.add_done_callback(conn.rfq_tasks.discard)
        elif isinstance(message, Welcome):
            conn.welcome = message
            self._adopt_welcome(message)
            if self._on_welcome is not None:
                self._spawn(self._on_welcome(message), "on_welcome")
        elif isinstance(message, Filled):
            self._callback(self._on_filled, message)
        elif isinstance(message, Expired):
            self._callback(self._on_expired, message)
        elif isinstance(message, Released):
            self._callback(self._on_released, message)
        elif isinstance(message, ErrorMessage):
            log.info(
                "%s: server error %s: %s (ref %s)",
                self.name,
                message.code,
                message.message,
                message.ref,
            )
            self._callback(self._on_error, message)
        elif isinstance(message, Pong) and isinstance(message.id, str):
            waiting = conn.pongs.pop(message.id, None)  # the answer to a sync()
            if waiting is not None and not waiting.done():
                waiting.set_result(None)

    def _callback(self, callback: Callback[T] | None, message: T) -> None:
        if callback is not None:
            self._spawn(callback(message), "callback")

    async def _answer(self, conn: _Connection, rfq: Rfq) -> None:
        if self._on_rfq is None:
            return
        reply = await self._on_rfq(rfq)
        if reply is None:
            return
        if reply.quote_id != rfq.quote_id:
            log.error("%s: handler answered %s with %s", self.name, rfq.quote_id, reply.quote_id)
            return
        if not await self._send_on(conn, reply):
            log.info("%s: could not send the answer to %s", self.name, rfq.quote_id)

    # ---- tasks ------------------------------------------------------------------------------

    def _spawn(self, awaitable: Awaitable[Any], label: str) -> asyncio.Task[Any]:
        # The awaitable becomes the task itself (no wrapper coroutine), so a task cancelled
        # before its first step still closes the coroutine: no "never awaited" warnings.
        task = asyncio.ensure_future(awaitable)
        task.set_name(f"{self.name}:{label}")
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed", task.get_name(), exc_info=task.exception())
