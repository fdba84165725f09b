"""The maker stream's sessions (protocol in docs/maker-protocol.md). The API handler checks the
maker credential and upgrades the connection; from there one session per socket sends `welcome`,
turns the maker's frames into registry calls, pings the maker, and takes it offline the moment
the socket closes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web
from eth_utils.address import is_address, to_checksum_address

from simulator.clock import Clock
from simulator.services.rfq.makers import LEVELS_MIN_INTERVAL_MS, MakerRegistry, OnlineMaker
from simulator.services.shared.amounts import valid_curve
from simulator.services.shared.venue import VenueDirectory

PING_INTERVAL_S = 15.0
MISSED_PINGS_ALLOWED = 2


class WebSocketGateway:
    """MakerGateway over an aiohttp WebSocket; one writer at a time."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self._ws = ws
        self._send_lock = asyncio.Lock()  # guards frame writes from concurrent tasks

    async def send(self, message: dict[str, Any]) -> None:
        if self._ws.closed:
            raise ConnectionError("maker socket closed")
        async with self._send_lock:
            await self._ws.send_str(json.dumps(message, separators=(",", ":")))

    async def close(self, code: int, reason: str) -> None:
        await self._ws.close(code=code, message=reason.encode())


@dataclass
class MakerSession:
    """One connection: the maker it made online and the newest ping id it answered."""

    maker: OnlineMaker
    last_pong: int = 0


def _error(code: str, message: str, ref: Any = None) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, "ref": ref}


class MakerStreamSessions:
    """Runs maker sessions against the RFQ area's registry, for the chains of the venue."""

    def __init__(
        self,
        registry: MakerRegistry,
        venue: VenueDirectory,
        clock: Clock,
        *,
        ping_interval_s: float = PING_INTERVAL_S,
    ) -> None:
        self._registry = registry
        self._venue = venue
        self._clock = clock
        self._ping_interval_s = ping_interval_s

    async def serve(
        self, ws: web.WebSocketResponse, *, maker_id: str, wallet: str, environment: str
    ) -> None:
        """The whole life of one prepared socket, until it closes; the maker is online from
        its `welcome` until then."""
        maker = OnlineMaker(
            maker_id=maker_id,
            wallet=wallet,
            environment=environment,
            gateway=WebSocketGateway(ws),
            connected_at=self._clock.time(),
        )
        replaced = self._registry.connect(maker)
        if replaced is not None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await replaced.gateway.close(4001, "replaced")
        session = MakerSession(maker)
        pinger = asyncio.create_task(self._pinger(session, ws))
        try:
            await maker.gateway.send(self.welcome(maker))
            async for frame in ws:
                if frame.type != WSMsgType.TEXT:
                    await maker.gateway.send(_error("bad_message", "text frames with JSON only"))
                    continue
                reply = self.on_text(session, frame.data)
                if reply is not None:
                    await maker.gateway.send(reply)
        except ConnectionError:
            pass
        finally:
            pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pinger
            self._registry.disconnect(maker)

    def welcome(self, maker: OnlineMaker) -> dict[str, Any]:
        chains = []
        for chain in self._venue.chains.values():
            if chain.environment != maker.environment:
                continue
            pairs = []
            for corridor in chain.corridors:
                if corridor.timing.mode != "RFQ":
                    continue
                for sell, buy in ((corridor.base, corridor.quote), (corridor.quote, corridor.base)):
                    pairs.append(
                        {
                            "sellToken": sell.address,
                            "buyToken": buy.address,
                            "sellDecimals": sell.decimals,
                            "buyDecimals": buy.decimals,
                            "feeBps": corridor.timing.fee_bps,
                            "replyBudgetMs": corridor.timing.reply_budget_ms,
                            "quoteTtlMs": corridor.timing.quote_ttl_s * 1000,
                        }
                    )
            chains.append(
                {
                    "chainId": chain.chain_id,
                    "reactor": chain.contracts.reactor,
                    "signatureTransfer": chain.contracts.signature_transfer,
                    "feeRecipient": chain.contracts.fee_recipient,
                    "pairs": pairs,
                }
            )
        return {
            "type": "welcome",
            "makerId": maker.maker_id,
            "wallet": maker.wallet,
            "environment": maker.environment,
            "serverTimeMs": self._clock.millis(),
            "levelsMinIntervalMs": LEVELS_MIN_INTERVAL_MS,
            "levelsMaxAgeMs": int(self._registry.levels_max_age_s * 1000),
            "pingIntervalMs": int(self._ping_interval_s * 1000),
            "chains": chains,
        }

    def on_text(self, session: MakerSession, text: str) -> dict[str, Any] | None:
        """One text frame from the maker; the reply to send, if any. No await: each frame's
        registry calls happen as one step."""
        try:
            message = json.loads(text)
        except ValueError:
            return _error("bad_message", "not JSON")
        if not isinstance(message, dict):
            return _error("bad_message", "a message is a JSON object")
        return self._dispatch(session, message)

    def _dispatch(self, session: MakerSession, message: dict[str, Any]) -> dict[str, Any] | None:
        kind = message.get("type")
        maker = session.maker
        if kind == "levels":
            return self._levels(maker, message)
        if kind in ("quote", "decline"):
            if not isinstance(message.get("quoteId"), str):
                return _error("bad_message", f"{kind} needs quoteId", kind)
            if self._registry.deliver(maker, message):
                return None
            return {
                "type": "released",
                "quoteId": message["quoteId"],
                "rfqId": None,
                "reason": "late",
            }
        if kind == "pong":
            identifier = message.get("id")
            if isinstance(identifier, int):
                session.last_pong = max(session.last_pong, identifier)
            return None
        if kind == "ping":
            return {"type": "pong", "id": message.get("id")}
        return _error("unknown_type", f"unknown message type {kind!r}", kind)

    def _levels(self, maker: OnlineMaker, message: dict[str, Any]) -> dict[str, Any] | None:
        chain_id = message.get("chainId")
        sell, buy = message.get("sellToken"), message.get("buyToken")
        if not isinstance(chain_id, int) or not isinstance(sell, str) or not isinstance(buy, str):
            return _error("bad_message", "levels needs chainId, sellToken, buyToken", "levels")
        chain = self._venue.chain(chain_id)
        if (
            chain is None
            or chain.environment != maker.environment
            or not is_address(sell)
            or not is_address(buy)
            or chain.corridor_for(sell, buy) is None
            or sell.lower() == buy.lower()
        ):
            return _error(
                "unknown_pair", f"no RFQ pair {sell}/{buy} on chain {chain_id} for you", "levels"
            )
        raw = message.get("levels")
        points: list[tuple[int, int]] = []
        try:
            assert isinstance(raw, list)
            for point in raw:
                sell_amount, buy_amount = point["sellAmount"], point["buyAmount"]
                assert isinstance(sell_amount, str)
                assert sell_amount.isascii()
                assert sell_amount.isdigit()
                assert isinstance(buy_amount, str)
                assert buy_amount.isascii()
                assert buy_amount.isdigit()
                points.append((int(sell_amount), int(buy_amount)))
        except (AssertionError, KeyError, TypeError):
            return _error(
                "bad_message", "levels must be a list of {sellAmount, buyAmount} strings", "levels"
            )
        if points and not valid_curve(points):
            return _error(
                "bad_message", "levels: up to nine points, both columns increasing", "levels"
            )
        key = (chain_id, to_checksum_address(sell).lower(), to_checksum_address(buy).lower())
        self._registry.set_levels(maker, key, points)
        return None

    async def _pinger(self, session: MakerSession, ws: web.WebSocketResponse) -> None:
        sequence = 0
        while not ws.closed:
            await asyncio.sleep(self._ping_interval_s)
            if sequence - session.last_pong > MISSED_PINGS_ALLOWED:
                await ws.close(code=4002, message=b"ping_timeout")
                return
            sequence += 1
            with contextlib.suppress(ConnectionError):
                await session.maker.gateway.send({"type": "ping", "id": sequence})
