"""WSS /v2/maker/stream: the maker side of the venue (protocol in docs/maker-protocol.md). The
handshake passes the access middleware like any API call (maker credential, scope
maker:stream); after the upgrade this adapter turns frames into registry calls."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from aiohttp import WSMsgType, web
from eth_utils.address import is_address, to_checksum_address

from simulator.api.http.appkeys import CALLER, CLOCK, RFQ, VENUE
from simulator.api.http.routes import Access, Operation, RouteTable
from simulator.errors import Forbidden, InternalError, RateLimited, Unauthorized
from simulator.services.rfq.makers import LEVELS_MIN_INTERVAL_MS, MakerRegistry, OnlineMaker
from simulator.services.shared.amounts import valid_curve

PING_INTERVAL_S = 15.0
MISSED_PINGS_ALLOWED = 2
MAX_MESSAGE_BYTES = 256 * 1024


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


def welcome(request: web.Request, maker: OnlineMaker) -> dict[str, Any]:
    chains = []
    for chain in request.app[VENUE].chains.values():
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
    registry = request.app[RFQ].makers
    return {
        "type": "welcome",
        "makerId": maker.maker_id,
        "wallet": maker.wallet,
        "environment": maker.environment,
        "serverTimeMs": request.app[CLOCK].millis(),
        "levelsMinIntervalMs": LEVELS_MIN_INTERVAL_MS,
        "levelsMaxAgeMs": int(registry.levels_max_age_s * 1000),
        "pingIntervalMs": int(PING_INTERVAL_S * 1000),
        "chains": chains,
    }


def _error(code: str, message: str, ref: Any = None) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, "ref": ref}


def _levels(
    request: web.Request, maker: OnlineMaker, message: dict[str, Any]
) -> dict[str, Any] | None:
    chain_id = message.get("chainId")
    sell, buy = message.get("sellToken"), message.get("buyToken")
    if not isinstance(chain_id, int) or not isinstance(sell, str) or not isinstance(buy, str):
        return _error("bad_message", "levels needs chainId, sellToken, buyToken", "levels")
    chain = request.app[VENUE].chain(chain_id)
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
        return _error("bad_message", "levels: up to nine points, both columns increasing", "levels")
    key = (chain_id, to_checksum_address(sell).lower(), to_checksum_address(buy).lower())
    request.app[RFQ].makers.set_levels(maker, key, points)
    return None


async def _pinger(maker: OnlineMaker, ws: web.WebSocketResponse, pongs: dict[str, int]) -> None:
    sequence = 0
    while not ws.closed:
        await asyncio.sleep(PING_INTERVAL_S)
        if sequence - pongs["last"] > MISSED_PINGS_ALLOWED:
            await ws.close(code=4002, message=b"ping_timeout")
            return
        sequence += 1
        with contextlib.suppress(ConnectionError):
            await maker.gateway.send({"type": "ping", "id": sequence})


async def maker_stream(request: web.Request) -> web.StreamResponse:
    caller = request[CALLER]
    key = caller.key
    if key is None:
        raise Unauthorized("A maker credential is required", details={"reason": "api_key_required"})
    if not key.is_maker_credential or key.maker_wallet is None:
        raise Forbidden("Only maker credentials may open the maker stream")
    registry: MakerRegistry = request.app[RFQ].makers
    ws = web.WebSocketResponse(max_msg_size=MAX_MESSAGE_BYTES, autoping=True)
    await ws.prepare(request)
    maker = OnlineMaker(
        maker_id=key.key_id,
        wallet=to_checksum_address(key.maker_wallet),
        environment=key.environment,
        gateway=WebSocketGateway(ws),
        connected_at=request.app[CLOCK].time(),
    )
    replaced = registry.connect(maker)
    if replaced is not None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await replaced.gateway.close(4001, "replaced")
    pongs = {"last": 0}
    pinger = asyncio.create_task(_pinger(maker, ws, pongs))
    try:
        await maker.gateway.send(welcome(request, maker))
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                await maker.gateway.send(_error("bad_message", "text frames with JSON only"))
                continue
            try:
                message = json.loads(frame.data)
            except ValueError:
                await maker.gateway.send(_error("bad_message", "not JSON"))
                continue
            if not isinstance(message, dict):
                await maker.gateway.send(_error("bad_message", "a message is a JSON object"))
                continue
            reply = await _dispatch(request, maker, message, pongs)
            if reply is not None:
                await maker.gateway.send(reply)
    except ConnectionError:
        pass
    finally:
        pinger.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pinger
        registry.disconnect(maker)
    return ws


async def _dispatch(
    request: web.Request, maker: OnlineMaker, message: dict[str, Any], pongs: dict[str, int]
) -> dict[str, Any] | None:
    kind = message.get("type")
    registry = request.app[RFQ].makers
    if kind == "levels":
        return _levels(request, maker, message)
    if kind in ("quote", "decline"):
        if not isinstance(message.get("quoteId"), str):
            return _error("bad_message", f"{kind} needs quoteId", kind)
        if registry.deliver(maker, message):
            return None
        return {"type": "released", "quoteId": message["quoteId"], "rfqId": None, "reason": "late"}
    if kind == "pong":
        identifier = message.get("id")
        if isinstance(identifier, int):
            pongs["last"] = max(pongs["last"], identifier)
        return None
    if kind == "ping":
        return {"type": "pong", "id": message.get("id")}
    return _error("unknown_type", f"unknown message type {kind!r}", kind)


def add_routes(table: RouteTable) -> None:
    table.add(
        Operation(
            method="GET",
            path="/v2/maker/stream",
            handler=maker_stream,
            operation_id="makerStream",
            summary="Maker stream (WebSocket upgrade); protocol in docs/maker-protocol.md",
            document="v2",
            tags=("maker",),
            responses={101: None},
            errors=(Unauthorized, Forbidden, RateLimited, InternalError),
            security=("bearerKey", "apiKeyHeader"),
            access=Access(scope="maker:stream", keyless=False),
            envelope=False,
        )
    )
