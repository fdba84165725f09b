"""A maker bot of the test's own on ``/v2/maker/stream`` (docs/maker-protocol.md), used to see
the auction from the makers' side: when each firm request reached which maker, and with what.

The probe holds no inventory and signs nothing: it answers every ``rfq`` with a ``decline``
(``unavailable``) or, when told to stay silent, not at all, and records the local monotonic time
at which each request arrived. Two probes on the same machine therefore measure the gap between
the moments the service asked two makers, independent of the service's clock.

It runs an aiohttp WebSocket client on an event loop in a background thread, so that the
(synchronous) tests can drive HTTP requests while the probe listens.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
from eth_account import Account

from conformance.deployment.sim_control import SimControl

Reply = Literal["decline", "silent"]
CONNECT_TIMEOUT_S = 10.0
# How long opens_the_stream listens for the service's first word (a service may also wait for
# the maker's): the simulator's welcome comes at once.
FIRST_WORD_S = 3.0


@dataclass(frozen=True)
class SeenRfq:
    at: float  # time.monotonic() when the message arrived
    message: Mapping[str, Any]


class MakerProbe:
    """One maker connection. Use as a context manager: connected (``welcome`` received) on
    entry, closed on exit."""

    def __init__(self, stream_url: str, maker_key: str, *, reply: Reply = "decline") -> None:
        self.stream_url = stream_url
        self.maker_key = maker_key
        self.reply: Reply = reply
        self.welcome: dict[str, Any] | None = None
        self.messages: list[dict[str, Any]] = []  # every server message, in order
        self._rfqs: list[SeenRfq] = []
        self._lock = threading.Lock()  # guards _rfqs and messages between the two threads
        self._arrived = threading.Condition(self._lock)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self._stop: asyncio.Event | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> MakerProbe:
        self._thread.start()
        self._task = asyncio.run_coroutine_threadsafe(self._run(), self._loop)
        if not self._ready.wait(CONNECT_TIMEOUT_S) or self.welcome is None:
            self.close()
            raise AssertionError(
                f"maker probe: no welcome from {self.stream_url} within {CONNECT_TIMEOUT_S} s"
                + (f" ({self._error!r})" if self._error else "")
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._task is not None:
            with contextlib.suppress(Exception):
                self._task.result(timeout=CONNECT_TIMEOUT_S)
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CONNECT_TIMEOUT_S)
        if not self._loop.is_running():
            self._loop.close()

    async def _run(self) -> None:
        self._stop = asyncio.Event()
        headers = {"Authorization": f"Bearer {self.maker_key}"}
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.ws_connect(self.stream_url, headers=headers, heartbeat=None) as ws,
            ):
                reader = asyncio.ensure_future(self._read(ws))
                stopper = asyncio.ensure_future(self._stop.wait())
                await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
                for task in (reader, stopper):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
        except Exception as exc:  # reported by __enter__ (no welcome) or ignored after
            self._error = exc
        finally:
            self._ready.set()

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for frame in ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                continue
            arrived = time.monotonic()
            message = json.loads(frame.data)
            with self._lock:
                self.messages.append(message)
            kind = message.get("type")
            if kind == "welcome":
                self.welcome = message
                self._ready.set()
            elif kind == "ping":
                await ws.send_str(json.dumps({"type": "pong", "id": message.get("id")}))
            elif kind == "rfq":
                with self._arrived:
                    self._rfqs.append(SeenRfq(arrived, message))
                    self._arrived.notify_all()
                if self.reply == "decline":
                    await ws.send_str(
                        json.dumps(
                            {
                                "type": "decline",
                                "quoteId": message["quoteId"],
                                "reason": "unavailable",
                            }
                        )
                    )

    # -- what the probe saw -----------------------------------------------------------------

    @property
    def rfqs(self) -> list[SeenRfq]:
        with self._lock:
            return list(self._rfqs)

    def rfqs_for(self, rfq_id: str) -> list[SeenRfq]:
        return [seen for seen in self.rfqs if seen.message.get("rfqId") == rfq_id]

    def wait_rfq(self, *, timeout: float = CONNECT_TIMEOUT_S, after: int = 0) -> SeenRfq:
        """The first firm request beyond the ``after`` first ones, waiting up to ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._rfqs) <= after:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"maker probe: no firm request within {timeout} s")
                self._arrived.wait(left)
            return self._rfqs[after]


def opens_the_stream(stream_url: str, maker_key: str, *, header: str = "Authorization") -> None:
    """Opens the maker stream with ``maker_key`` (sent as ``Authorization: Bearer``, or in the
    ``X-API-Key`` header when ``header`` names it): the WebSocket upgrade must succeed, else an
    AssertionError names the handshake's status; and the service must not close the connection
    before it says anything. Its protocol is not shown, so whatever comes first within
    ``FIRST_WORD_S`` passes (a text or binary message), and so does nothing (a service that
    waits for the maker to speak first); a close, or the connection dropped, fails: a
    credential that never stays connected is never asked to price anything."""

    async def handshake() -> None:
        value = f"Bearer {maker_key}" if header == "Authorization" else maker_key
        headers = {header: value}
        async with aiohttp.ClientSession() as session:
            try:
                ws = await session.ws_connect(stream_url, headers=headers, heartbeat=None)
            except aiohttp.WSServerHandshakeError as exc:
                raise AssertionError(
                    f"the maker stream refused a maker credential: {exc.status} {exc.message}"
                ) from exc
            async with ws:
                try:
                    async with asyncio.timeout(FIRST_WORD_S):
                        first = await ws.receive()
                except TimeoutError:
                    return  # nothing said yet, and the connection still open
                assert first.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), (
                    "the maker stream closed a maker credential's connection before saying "
                    f"anything: {first.type.name} (close code {ws.close_code}, {first.extra!r})"
                )

    asyncio.run(asyncio.wait_for(handshake(), CONNECT_TIMEOUT_S))


def stream_url(base_url: str) -> str:
    """``http://host:port`` -> ``ws://host:port/v2/maker/stream`` (https -> wss)."""
    if base_url.startswith("https://"):
        return "wss://" + base_url[len("https://") :] + "/v2/maker/stream"
    return "ws://" + base_url.removeprefix("http://") + "/v2/maker/stream"


def new_maker_key(sim: SimControl, environment: str = "test") -> tuple[str, str]:
    """A maker credential (scope maker:stream) for a fresh funding wallet of its own: (key,
    wallet). The wallet holds nothing, which a probe never needs."""
    wallet = Account.create().address
    record = sim.create_key(
        f"conformance-maker-{secrets.token_hex(6)}",
        environment,
        ["maker:stream"],
        maker_wallet=wallet,
    )
    return str(record["key"]), wallet
