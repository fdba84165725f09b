"""The maker stream's sessions (protocol in docs/maker-protocol.md). The API handler checks the
maker credential and upgrades the connection; from there one session per socket sends `welcome`,
turns the maker's frames into registry calls, pings the maker, and takes it offline the moment
the socket closes.

Every frame is read with the message models of `makers/protocol.py`, the ones the bundled maker
client writes with, so both ends agree on one definition of each message. The server reads them
strictly typed but ignores fields it does not know (`parse_maker_message(venue=True)`), and
answers what it refuses with the `error` codes of the document."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web

from makers.protocol import (
    MAKER_TYPES,
    ChainInfo,
    Decline,
    ErrorMessage,
    Levels,
    Message,
    PairInfo,
    Ping,
    Pong,
    ProtocolError,
    Quote,
    Released,
    Welcome,
    parse_maker_message,
    serialize,
)
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
from simulator.settings import ChainEnvironment

PING_INTERVAL_S = 15.0
MISSED_PINGS_ALLOWED = 2

Reply = ErrorMessage | Released | Pong  # what a maker's frame may be answered with


class WebSocketGateway:
    """MakerGateway over an aiohttp WebSocket; one writer at a time."""

    def __init__(self, ws: web.WebSocketResponse, tap: Callable[[str], None] | None = None) -> None:
        self._ws = ws
        self._send_lock = asyncio.Lock()  # guards frame writes from concurrent tasks
        self._tap = tap  # told every frame sent (the /_sim/maker-messages journal)

    async def send(self, message: dict[str, Any]) -> None:
        await self._send_text(json.dumps(message, separators=(",", ":")))

    async def send_message(self, message: Message) -> None:
        """A message the session itself builds, from the protocol's models."""
        await self._send_text(serialize(message))

    async def _send_text(self, text: str) -> None:
        if self._ws.closed:
            raise ConnectionError("maker socket closed")
        async with self._send_lock:
            await self._ws.send_str(text)
        if self._tap is not None:
            self._tap(text)

    async def close(self, code: int, reason: str) -> None:
        await self._ws.close(code=code, message=reason.encode())


@dataclass
class MakerSession:
    """One connection: the maker it made online and the newest ping id it answered."""

    maker: OnlineMaker
    last_pong: int = 0


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
    ) -> None:
        self._registry = registry
        self._venue = venue
        self._clock = clock
        self._ping_interval_s = ping_interval_s
        self._frames = frames  # every frame in and out, per maker (None: not recorded)

    async def serve(
        self,
        ws: web.WebSocketResponse,
        *,
        maker_id: str,
        wallet: str,
        environment: ChainEnvironment,
        fills_book: bool = False,
    ) -> None:
        """The whole life of one prepared socket, until it closes; the maker is online from
        its `welcome` until then."""
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
            with contextlib.suppress(ConnectionError, RuntimeError):
                await replaced.gateway.close(4001, "replaced")
        session = MakerSession(maker)
        pinger = asyncio.create_task(self._pinger(session, ws, gateway))
        try:
            await gateway.send_message(self.welcome(maker))
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    if frames is not None:
                        frames.record_frame(maker_id, wallet, "in", frame.data)
                    reply = self.on_text(session, frame.data)
                else:
                    reply = ErrorMessage(code="bad_message", message="text frames with JSON only")
                if reply is not None:
                    await gateway.send_message(reply)
        except ConnectionError:
            pass
        finally:
            pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pinger
            self._registry.disconnect(maker)

    @staticmethod
    def _pairs(chain: ChainVenue, mode: str) -> list[PairInfo]:
        return [
            PairInfo(
                sellToken=sell.address,
                buyToken=buy.address,
                sellDecimals=sell.decimals,
                buyDecimals=buy.decimals,
                feeBps=corridor.timing.fee_bps,
                replyBudgetMs=corridor.timing.reply_budget_ms,
                quoteTtlMs=corridor.timing.quote_ttl_s * 1000,
            )
            for corridor in chain.corridors
            if corridor.timing.mode == mode
            for sell, buy in ((corridor.base, corridor.quote), (corridor.quote, corridor.base))
        ]

    def welcome(self, maker: OnlineMaker) -> Welcome:
        chains = [
            ChainInfo(
                chainId=chain.chain_id,
                reactor=chain.contracts.reactor,
                signatureTransfer=chain.contracts.signature_transfer,
                feeRecipient=chain.contracts.fee_recipient,
                pairs=self._pairs(chain, "RFQ"),
                # v1 BOOK corridors: no rfqs there, but a filling operator's levels are its
                # standing bid for resting orders (docs/maker-protocol.md).
                bookPairs=self._pairs(chain, "BOOK"),
            )
            for chain in self._venue.chains.values()
            if chain.environment == maker.environment
        ]
        return Welcome(
            makerId=maker.maker_id,
            wallet=maker.wallet,
            environment=maker.environment,
            serverTimeMs=self._clock.millis(),
            levelsMinIntervalMs=LEVELS_MIN_INTERVAL_MS,
            levelsMaxAgeMs=int(self._registry.levels_max_age_s * 1000),
            pingIntervalMs=int(self._ping_interval_s * 1000),
            chains=chains,
        )

    def on_text(self, session: MakerSession, text: str) -> Reply | None:
        """One text frame from the maker; the reply to send, if any. No await: each frame's
        registry calls happen as one step."""
        try:
            obj = json.loads(text)
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
        if isinstance(message, Quote):
            quote = QuoteReply(
                order=message.order.to_order(),
                signature=bytes.fromhex(message.signature[2:]),
                expires_at_ms=message.expiresAtMs,
            )
            return self._answer(maker, message.quoteId, quote)
        if isinstance(message, Decline):
            decline = DeclineReply(reason=message.reason, max_sell_amount=message.maxSellAmount)
            return self._answer(maker, message.quoteId, decline)
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
        return Released(quoteId=quote_id, rfqId=None, reason="late")

    def _levels(self, maker: OnlineMaker, levels: Levels) -> ErrorMessage | None:
        chain = self._venue.chain(levels.chainId)
        sell, buy = levels.sellToken.lower(), levels.buyToken.lower()
        if (
            chain is None
            or chain.environment != maker.environment
            or sell == buy
            or chain.corridor_for(sell, buy) is None
        ):
            return ErrorMessage(
                code="unknown_pair",
                message=(
                    f"no RFQ pair {levels.sellToken}/{levels.buyToken} on chain"
                    f" {levels.chainId} for you"
                ),
                ref="levels",
            )
        points = [(level.sellAmount, level.buyAmount) for level in levels.levels]
        self._registry.set_levels(maker, (levels.chainId, sell, buy), points)
        return None

    async def _pinger(
        self, session: MakerSession, ws: web.WebSocketResponse, gateway: WebSocketGateway
    ) -> None:
        sequence = 0
        while not ws.closed:
            await asyncio.sleep(self._ping_interval_s)
            if sequence - session.last_pong > MISSED_PINGS_ALLOWED:
                await ws.close(code=4002, message=b"ping_timeout")
                return
            sequence += 1
            with contextlib.suppress(ConnectionError):
                await gateway.send_message(Ping(id=sequence))
