"""The maker stream's sessions (protocol in docs/maker-protocol.md). The API handler checks the
maker credential and upgrades the connection; from there one session per socket sends `welcome`,
turns the maker's frames into registry calls, pings the maker, and takes it offline the moment
the socket closes.

Every frame is read with the message models of `rfqkit/maker_protocol.py`, the ones the bundled
maker client writes with, so both ends agree on one definition of each message. The server reads
them strictly typed but ignores fields it does not know (`parse_maker_message(venue=True)`), and
answers what it refuses with the `error` codes of the document."""

from __future__ import annotations

import asyncio
import contextlib
from asyncio import FIRST_COMPLETED
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web

from rfqkit import json_text
from rfqkit.maker_protocol import (
    CLOSE_CREDENTIAL_WITHDRAWN,
    CLOSE_GOING_AWAY,
    CLOSE_PING_TIMEOUT,
    CLOSE_REPLACED,
    MAKER_TYPES,
    Decline,
    ErrorMessage,
    Levels,
    MakerQuote,
    Message,
    Ping,
    Pong,
    ProtocolError,
    Released,
    Welcome,
    WelcomeChain,
    WelcomePair,
    parse_maker_message,
    serialize,
)
from simulator.adapters.rfq.maker_links import MakerLinks
from simulator.clock import Clock
from simulator.services.rfq.makers import (
    LEVELS_MIN_INTERVAL_MS,
    DeclineReply,
    MakerRegistry,
    MakerReply,
    MalformedReply,
    OnlineMaker,
    QuoteReply,
)
from simulator.services.rfq.ports import FrameTap
from simulator.services.shared.venue import ChainVenue, VenueDirectory
from simulator.services.sim.instances import InstanceEntry
from simulator.settings import ChainEnvironment

PING_INTERVAL_S = 15.0
LINKS_READY_S = 2.0  # several instances: a maker's welcome waits this long at most for its links
MISSED_PINGS_ALLOWED = 2

Reply = ErrorMessage | Released | Pong  # what a maker's frame may be answered with

# The venue's other instances alive (several instances; None: one process)
OtherInstances = Callable[[], Awaitable[list[InstanceEntry]]]


class WebSocketGateway:
    """MakerGateway over an aiohttp WebSocket; one writer at a time.

    `close` only asks for the end: the session's own task runs the closing handshake (see
    `MakerStreamSessions.serve`). aiohttp's `close()` called from any other task while the
    session's task waits in `receive()` takes its own wake-up for the peer's close frame and
    drops the TCP connection right after sending ours; a client that had not read our frame
    yet then fails to answer it and reports 1006 instead of our code."""

    def __init__(self, ws: web.WebSocketResponse, tap: Callable[[str], None] | None = None) -> None:
        self._ws = ws
        self._send_lock = asyncio.Lock()  # guards frame writes from concurrent tasks
        self._tap = tap  # told every frame sent (the /_sim/maker-messages journal)
        # (code, reason) once someone asked for the end; nothing more is sent after it.
        self.close_requested: asyncio.Future[tuple[int, str]] = (
            asyncio.get_running_loop().create_future()
        )

    async def send(self, message: Message) -> None:
        await self.send_text(serialize(message))

    async def send_text(self, text: str) -> None:
        if self._ws.closed or self.close_requested.done():
            raise ConnectionError("maker socket closed")
        async with self._send_lock:
            await self._ws.send_str(text)
        if self._tap is not None:
            self._tap(text)

    async def close(self, code: int, reason: str) -> None:
        self.request_close(code, reason)

    def request_close(self, code: int, reason: str) -> None:
        """End the connection with `code`; the first request wins."""
        if not self.close_requested.done():
            self.close_requested.set_result((code, reason))


@dataclass
class MakerSession:
    """One connection: the maker it made online and the newest ping id it answered."""

    maker: OnlineMaker
    last_pong: int = 0
    relay: MakerLinks | None = None  # its frames for the venue's other instances


class MakerStreamSessions:
    """Runs maker sessions against the RFQ area's registry, for the chains of the venue."""

    def __init__(
        self,
        registry: MakerRegistry,
        venue: VenueDirectory,
        clock: Clock,
        *,
        ping_interval_s: float = PING_INTERVAL_S,
        frames: FrameTap | None = None,
        others: OtherInstances | None = None,
    ) -> None:
        self._registry = registry
        self._others = others
        self._venue = venue
        self._clock = clock
        self._ping_interval_s = ping_interval_s
        self._frames = frames  # every frame in and out, per maker (None: not recorded)
        self._live: dict[WebSocketGateway, str] = {}  # open sockets -> their credential
        self._all_ended = asyncio.Event()  # set while no socket is open
        self._all_ended.set()
        self._relays: set[MakerLinks] = set()  # of the makers connected here (several instances)

    async def serve(
        self,
        ws: web.WebSocketResponse,
        *,
        maker_id: str,
        wallet: str,
        environment: ChainEnvironment,
        fills_book: bool = False,
        relay_headers: Mapping[str, str] | None = None,
    ) -> None:
        """The whole life of one prepared socket, until it closes; the maker is online from
        its `welcome` until then (and, with `relay_headers`, what a link to another instance
        sends, at the venue's other instances too: adapters/rfq/maker_links.py)."""
        frames = self._frames
        gateway = WebSocketGateway(
            ws,
            None
            if frames is None
            else lambda text: frames.record_frame(maker_id, wallet, "out", text),
        )
        maker = OnlineMaker(
            maker_id=maker_id,
            wallet=wallet,
            environment=environment,
            gateway=gateway,
            connected_at=self._clock.time(),
            fills_book=fills_book,
        )
        replaced = self._registry.connect(maker)
        if replaced is not None:
            await replaced.gateway.close(CLOSE_REPLACED, "replaced")
        self._live[gateway] = maker_id
        self._all_ended.clear()
        relay = (
            MakerLinks(gateway.send_text, relay_headers, self._others)
            if relay_headers is not None and self._others is not None
            else None
        )
        session = MakerSession(maker, relay=relay)
        if relay is not None:
            self._relays.add(relay)
        pinger = asyncio.create_task(self._pinger(session, ws, gateway))
        reader = asyncio.create_task(self._read(session, ws, gateway))
        relaying = (
            asyncio.create_task(session.relay.run(), name=f"maker-relay-{maker_id}")
            if session.relay is not None
            else None
        )
        try:
            waits: set[asyncio.Future[Any]] = {reader, gateway.close_requested}
            await asyncio.wait(waits, return_when=FIRST_COMPLETED)
            if not reader.done():
                # Asked to close: stop reading, then run the closing handshake from this task,
                # so the socket stays open until the maker answered our close frame (or the
                # handshake timed out) and the maker reads our code, not 1006.
                self._registry.disconnect(maker)  # offline from the request on
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader
                code, reason = gateway.close_requested.result()
                await ws.close(code=code, message=reason.encode())
        finally:
            for task in (reader, pinger, *([relaying] if relaying else [])):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._registry.disconnect(maker)
            if not gateway.close_requested.done():
                gateway.close_requested.cancel()
            del self._live[gateway]
            if relay is not None:
                self._relays.discard(relay)
            if not self._live:
                self._all_ended.set()

    async def linked(self, instances: set[int], timeout_s: float) -> bool:
        """Until every maker connected here has a link open to each of `instances` (True), or
        `timeout_s` passed (False). Polled: a link opens in its own task, unannounced."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while any(not instances <= relay.linked_to() for relay in self._relays):
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    def credential_withdrawn(self, maker_id: str, status: str) -> None:
        """A credential was suspended or revoked: its connections end (close code 4003, the
        reason names the new status); the handshake of a new one is refused with 401."""
        for gateway, credential in list(self._live.items()):
            if credential == maker_id:
                gateway.request_close(CLOSE_CREDENTIAL_WITHDRAWN, f"credential_{status}")

    async def close_all(self, *, timeout_s: float) -> None:
        """The server stops: every connection ends with 1001 `server_stopping`; waits, at most
        `timeout_s`, until their closing handshakes are over."""
        for gateway in list(self._live):
            gateway.request_close(CLOSE_GOING_AWAY, "server_stopping")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self._all_ended.wait()

    async def _read(
        self, session: MakerSession, ws: web.WebSocketResponse, gateway: WebSocketGateway
    ) -> None:
        """Welcome the maker, then answer its frames until the socket closes."""
        frames = self._frames
        maker = session.maker
        with contextlib.suppress(ConnectionError):
            if session.relay is not None:  # welcomed once the venue's instances can ask it
                await session.relay.ready(LINKS_READY_S)
            await gateway.send(self.welcome(maker))
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    if frames is not None:
                        frames.record_frame(maker.maker_id, maker.wallet, "in", frame.data)
                    if session.relay is not None and session.relay.route(frame.data):
                        continue  # an answer to another instance's request: sent there
                    reply = self.on_text(session, frame.data)
                else:
                    reply = ErrorMessage(code="bad_message", message="text frames with JSON only")
                if reply is not None:
                    await gateway.send(reply)

    @staticmethod
    def _pairs(chain: ChainVenue, mode: str) -> list[WelcomePair]:
        return [
            WelcomePair(
                sell_token=sell.address,
                buy_token=buy.address,
                sell_decimals=sell.decimals,
                buy_decimals=buy.decimals,
                fee_bps=corridor.timing.fee_bps,
                reply_budget_ms=corridor.timing.reply_budget_ms,
                quote_ttl_ms=corridor.timing.quote_ttl_s * 1000,
            )
            for corridor in chain.corridors
            if corridor.timing.mode == mode
            for sell, buy in ((corridor.base, corridor.quote), (corridor.quote, corridor.base))
        ]

    def welcome(self, maker: OnlineMaker) -> Welcome:
        chains = [
            WelcomeChain(
                chain_id=chain.chain_id,
                reactor=chain.contracts.reactor,
                signature_transfer=chain.contracts.signature_transfer,
                fee_recipient=chain.contracts.fee_recipient,
                pairs=self._pairs(chain, "RFQ"),
                # v1 BOOK corridors: no rfqs there, but a filling operator's levels are its
                # standing bid for resting orders (docs/maker-protocol.md).
                book_pairs=self._pairs(chain, "BOOK"),
            )
            for chain in self._venue.chains.values()
            if chain.environment == maker.environment
        ]
        return Welcome(
            maker_id=maker.maker_id,
            wallet=maker.wallet,
            environment=maker.environment,
            server_time_ms=self._clock.millis(),
            levels_min_interval_ms=LEVELS_MIN_INTERVAL_MS,
            levels_max_age_ms=int(self._registry.levels_max_age_s * 1000),
            ping_interval_ms=int(self._ping_interval_s * 1000),
            chains=chains,
        )

    def on_text(self, session: MakerSession, text: str) -> Reply | None:
        """One text frame from the maker; the reply to send, if any. No await: each frame's
        registry calls happen as one step."""
        try:
            obj = json_text.loads(text)
        except ValueError:
            return ErrorMessage(code="bad_message", message="not JSON")
        if not isinstance(obj, dict):
            return ErrorMessage(code="bad_message", message="a message is a JSON object")
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in MAKER_TYPES:
            return ErrorMessage(
                code="unknown_type",
                message=f"unknown message type {kind!r}",
                ref=kind if isinstance(kind, str) else None,
            )
        try:
            message = parse_maker_message(obj, venue=True)
        except ProtocolError as refused:
            return self._unparsed(session.maker, kind, obj.get("quoteId"), refused)
        maker = session.maker
        if isinstance(message, Levels):
            return self._levels(maker, message)
        if isinstance(message, MakerQuote):
            quote = QuoteReply(
                order=message.order.to_order(),
                signature=bytes.fromhex(message.signature[2:]),
                expires_at_ms=message.expires_at_ms,
            )
            return self._answer(maker, message.quote_id, quote)
        if isinstance(message, Decline):
            decline = DeclineReply(reason=message.reason, max_sell_amount=message.max_sell_amount)
            return self._answer(maker, message.quote_id, decline)
        if isinstance(message, Ping):
            return Pong(id=message.id)
        if isinstance(message.id, int):  # a pong: only our own (integer) ping ids count
            session.last_pong = max(session.last_pong, message.id)
        return None

    def _unparsed(
        self, maker: OnlineMaker, kind: str, quote_id: object, refused: ProtocolError
    ) -> Reply | None:
        detail = "; ".join(refused.issues) or str(refused)
        if kind in ("quote", "decline") and isinstance(quote_id, str):
            # An answer that names its request still ends it (as an invalid order, so the
            # auction stops waiting and the maker hears why); one for a request nobody waits
            # for any more is simply late, however it is written.
            return self._answer(maker, quote_id, MalformedReply(f"{refused}: {detail}"))
        return ErrorMessage(code="bad_message", message=f"{refused}: {detail}", ref=kind)

    def _answer(self, maker: OnlineMaker, quote_id: str, reply: MakerReply) -> Released | None:
        if self._registry.deliver(maker, quote_id, reply):
            return None
        # Unknown, already answered or past replyBy: the request that named it is gone, so
        # there is no rfq to name (docs/maker-protocol.md: `rfqId` is then null).
        return Released(quote_id=quote_id, rfq_id=None, reason="late")

    def _levels(self, maker: OnlineMaker, levels: Levels) -> ErrorMessage | None:
        chain = self._venue.chain(levels.chain_id)
        sell, buy = levels.sell_token.lower(), levels.buy_token.lower()
        if (
            chain is None
            or chain.environment != maker.environment
            or sell == buy
            or chain.corridor_for(sell, buy) is None
        ):
            return ErrorMessage(
                code="unknown_pair",
                message=(
                    f"no RFQ pair {levels.sell_token}/{levels.buy_token} on chain"
                    f" {levels.chain_id} for you"
                ),
                ref="levels",
            )
        points = [(level.sell_amount, level.buy_amount) for level in levels.levels]
        self._registry.set_levels(maker, (levels.chain_id, sell, buy), points)
        return None

    async def _pinger(
        self, session: MakerSession, ws: web.WebSocketResponse, gateway: WebSocketGateway
    ) -> None:
        sequence = 0
        while not ws.closed:
            await asyncio.sleep(self._ping_interval_s)
            if sequence - session.last_pong > MISSED_PINGS_ALLOWED:
                await gateway.close(CLOSE_PING_TIMEOUT, "ping_timeout")
                return
            sequence += 1
            with contextlib.suppress(ConnectionError):
                await gateway.send(Ping(id=sequence))
