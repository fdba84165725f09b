"""A small in-test server that plays the venue's side of the maker stream protocol: the
handshake (401/403 refusals in the error envelope), `welcome`, and whatever a test sends; every
maker frame it receives is parsed with `rfqkit.maker_protocol.parse_maker_message` and queued,
except a maker's `ping`, which it answers with a `pong` as the venue does (in order: after every
frame read before it)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestServer

from rfqkit.maker_protocol import (
    MakerMessage,
    Message,
    Ping,
    Pong,
    Rfq,
    Welcome,
    WelcomeChain,
    WelcomePair,
    parse_maker_message,
    serialize,
)

M = TypeVar("M")
WAIT_S = 10.0  # upper bound for anything the tests wait for; normally milliseconds


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class FakeConnection:
    key: str
    ws: web.WebSocketResponse
    welcome: Welcome
    inbox: asyncio.Queue[tuple[int, MakerMessage]] = field(default_factory=asyncio.Queue)
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    async def send(self, message: Message) -> None:
        await self.ws.send_str(serialize(message))

    async def receive(self) -> MakerMessage:
        _, message = await self.receive_timed()
        return message

    async def receive_timed(self) -> tuple[int, MakerMessage]:
        """(arrival time in ms, message)."""
        async with asyncio.timeout(WAIT_S):
            return await self.inbox.get()

    async def expect(self, kind: type[M]) -> M:
        """The next message, which must be a `kind` (levels are skipped unless asked for)."""
        while True:
            message = await self.receive()
            if isinstance(message, kind):
                return message
            if type(message).__name__ != "Levels":
                raise AssertionError(f"expected {kind.__name__}, got {message!r}")

    async def barrier(self, ping_id: str = "barrier") -> list[MakerMessage]:
        """Ping and collect everything the maker sent before the pong (in order). Proves a
        message was NOT sent without sleeping for it."""
        await self.send(Ping(id=ping_id))
        seen: list[MakerMessage] = []
        while True:
            message = await self.receive()
            if isinstance(message, Pong) and message.id == ping_id:
                return seen
            seen.append(message)

    async def close(self, code: int = 1000, reason: bytes = b"") -> None:
        await self.ws.close(code=code, message=reason)


class FakeStreamServer:
    """`keys`: credential -> wallet address; `forbidden`: credentials answered 403."""

    def __init__(
        self,
        welcome_for: Callable[[str, str], Welcome],
        keys: dict[str, str],
        forbidden: frozenset[str] = frozenset(),
    ) -> None:
        self.welcome_for = welcome_for
        self.keys = keys
        self.forbidden = forbidden
        self.handshakes: list[str | None] = []  # the key of every upgrade attempt
        self.answer_pings = True  # False: a maker's pings are queued like any frame, unanswered
        self.read_delay_s = 0.0  # a loaded venue: each frame is taken up this long after arriving
        self.connections: list[FakeConnection] = []
        self._new: asyncio.Queue[FakeConnection] = asyncio.Queue()
        self.app = web.Application()  # tests may add routes (a control API) before start()
        self.app.router.add_get("/v2/maker/stream", self._handler)
        self.server = TestServer(self.app, host="127.0.0.1")

    @property
    def url(self) -> str:
        return str(self.server.make_url(""))

    async def start(self) -> FakeStreamServer:
        await self.server.start_server()
        return self

    async def close(self) -> None:
        for conn in self.connections:
            if not conn.ws.closed:
                await conn.ws.close()
        await self.server.close()

    async def next_connection(self) -> FakeConnection:
        async with asyncio.timeout(WAIT_S):
            return await self._new.get()

    @staticmethod
    def _error(status: int, code: str, message: str) -> web.Response:
        body = {"error": {"code": code, "message": message, "request_id": "req_fake"}}
        return web.json_response(body, status=status, headers={"X-Request-Id": "req_fake"})

    async def _handler(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        key = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
        key = key or request.headers.get("X-API-Key")
        self.handshakes.append(key)
        if key in self.forbidden:
            return self._error(403, "forbidden", "Not a maker credential")
        if key is None or key not in self.keys:
            return self._error(401, "unauthorized", "Authentication required")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        conn = FakeConnection(key=key, ws=ws, welcome=self.welcome_for(key, self.keys[key]))
        self.connections.append(conn)
        await conn.send(conn.welcome)
        self._new.put_nowait(conn)
        try:
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    if self.read_delay_s:
                        await asyncio.sleep(self.read_delay_s)
                    message = parse_maker_message(frame.data)
                    if isinstance(message, Ping) and self.answer_pings:
                        await conn.send(Pong(id=message.id))
                    else:
                        conn.inbox.put_nowait((now_ms(), message))
        finally:
            conn.closed.set()
        return ws


ADDR = {
    "reactor": "0x" + "11" * 20,
    "signature_transfer": "0x" + "22" * 20,
    "fee_recipient": "0x" + "33" * 20,
    "USDT": "0x" + "a1" * 20,
    "NGNS": "0x" + "b2" * 20,
    "taker": "0x" + "c3" * 20,
}


def welcome(
    wallet: str,
    *,
    chain_id: int = 56,
    environment: str = "live",
    levels_min_interval_ms: int = 0,
    ping_interval_ms: int = 15_000,
    reply_budget_ms: int = 750,
    addresses: dict[str, str] | None = None,
    decimals: dict[str, int] | None = None,
) -> Welcome:
    """A welcome for one chain with the USDT/NGNS corridor in both directions."""
    a = {**ADDR, **(addresses or {})}
    d = {"USDT": 18, "NGNS": 6, **(decimals or {})}

    def pair(sell: str, buy: str) -> WelcomePair:
        return WelcomePair(
            sell_token=a[sell],
            buy_token=a[buy],
            sell_decimals=d[sell],
            buy_decimals=d[buy],
            fee_bps=5,
            reply_budget_ms=reply_budget_ms,
            quote_ttl_ms=60_000,
        )

    return Welcome(
        maker_id=f"tx_{environment}_fake",
        wallet=wallet,
        environment=environment,  # type: ignore[arg-type]
        server_time_ms=now_ms(),
        levels_min_interval_ms=levels_min_interval_ms,
        levels_max_age_ms=10_000,
        ping_interval_ms=ping_interval_ms,
        chains=[
            WelcomeChain(
                chain_id=chain_id,
                reactor=a["reactor"],
                signature_transfer=a["signature_transfer"],
                fee_recipient=a["fee_recipient"],
                pairs=[pair("USDT", "NGNS"), pair("NGNS", "USDT")],
            )
        ],
    )


def rfq(
    welcome: Welcome,
    *,
    sell: str,
    buy: str,
    kind: str = "exact_input",
    amount: int,
    quote_id: str = "mq_1",
    taker: str = ADDR["taker"],
    reply_budget_ms: int = 750,
    **overrides: Any,
) -> Rfq:
    """An rfq on the welcome's first chain. `amount` is makerReceives (exact_input, fee 5 bps
    on top) or makerGives (exact_output)."""
    chain = welcome.chains[0]
    start = now_ms()
    body: dict[str, Any] = {
        "type": "rfq",
        "quoteId": quote_id,
        "rfqId": "rfq_" + quote_id,
        "chainId": chain.chain_id,
        "sellToken": sell,
        "buyToken": buy,
        "kind": kind,
        "makerReceives": str(amount) if kind == "exact_input" else None,
        "feeAmount": str(amount * 5 // 10_000) if kind == "exact_input" else None,
        "makerGives": str(amount) if kind == "exact_output" else None,
        "feeBps": 5,
        "taker": taker,
        "reactor": chain.reactor,
        "signatureTransfer": chain.signature_transfer,
        "replyByMs": start + reply_budget_ms,
        "minExpiresAtMs": start + reply_budget_ms + 5_000,
        "maxExpiresAtMs": start + 60_000,
        **overrides,
    }
    return Rfq.model_validate(json.loads(json.dumps(body)))
