"""The maker stream's sessions (adapters/rfq/maker_stream.py): frames read with the protocol's
models and turned into registry calls, the replies documented in docs/maker-protocol.md, and
the socket's life (welcome, replacement, ping timeout) over a real loopback WebSocket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from eth_utils.address import to_checksum_address

from contracts.orders import RfqOrder
from rfqkit.maker_protocol import (
    ErrorMessage,
    Ping,
    Pong,
    Released,
    Rfq,
    ServerMessage,
    Welcome,
    parse_server_message,
    serialize,
    to_wire,
)
from simulator.adapters.rfq.maker_stream import MakerSession, MakerStreamSessions
from simulator.clock import Clock
from simulator.services.rfq.makers import (
    DeclineReply,
    MakerRegistry,
    MakerReply,
    MalformedReply,
    OnlineMaker,
    QuoteReply,
)
from simulator.services.shared.venue import (
    ChainVenue,
    VenueContracts,
    VenueCorridor,
    VenueDirectory,
    VenueToken,
)
from simulator.settings import ChainEnvironment, CorridorTiming

WALLET = to_checksum_address("0x" + "77" * 20)
USDT = to_checksum_address("0x" + "aa" * 20)
NGNS = to_checksum_address("0x" + "bb" * 20)
USDC = to_checksum_address("0x" + "cc" * 20)


def chain(chain_id: int, environment: ChainEnvironment) -> ChainVenue:
    usdt = VenueToken("USDT", "Tether", USDT, 18, True)
    ngns = VenueToken("NGNS", "Naira", NGNS, 6, False)
    usdc = VenueToken("USDC", "USD Coin", USDC, 6, False)
    contracts = VenueContracts(*(to_checksum_address(f"0x{i:040x}") for i in range(1, 6)))
    return ChainVenue(
        chain_id=chain_id,
        environment=environment,
        name=f"chain-{chain_id}",
        rpc_url="http://127.0.0.1:1",
        managed=False,
        min_size=Decimal(0),
        contracts=contracts,
        tokens=(usdt, ngns, usdc),
        corridors=(
            VenueCorridor(usdt, ngns, CorridorTiming()),
            VenueCorridor(usdc, ngns, CorridorTiming(mode="BOOK")),
        ),
    )


class FakeGateway:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None

    async def send(self, message: ServerMessage) -> None:
        self.sent.append(to_wire(message))

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


ORDER = RfqOrder(
    reactor=to_checksum_address(f"0x{2:040x}"),
    maker=WALLET,
    taker=to_checksum_address("0x" + "99" * 20),
    inputToken=NGNS,
    inputAmount=1590,
    outputToken=USDT,
    outputAmount=1000,
    feeAmount=0,
    nonce=2**200,
    deadline=1_795_500_090,
)
# The firm request the tests' answers reply to (only its quoteId matters to the registry).
REQUEST = Rfq(
    quote_id="mq_1",
    rfq_id="rfq_1",
    chain_id=97,
    sell_token=USDT,
    buy_token=NGNS,
    kind="exact_input",
    maker_receives=1000,
    fee_amount=0,
    fee_bps=0,
    taker=ORDER.taker,
    reactor=ORDER.reactor,
    signature_transfer=ORDER.reactor,
    reply_by_ms=1_795_500_000_750,
    min_expires_at_ms=1_795_500_000_001,
    max_expires_at_ms=1_795_500_060_000,
)


@pytest.fixture
def registry() -> MakerRegistry:
    return MakerRegistry(Clock())


@pytest.fixture
def sessions(registry: MakerRegistry) -> MakerStreamSessions:
    venue = VenueDirectory(chains={56: chain(56, "live"), 97: chain(97, "test")})
    return MakerStreamSessions(registry, venue, Clock())


@pytest.fixture
def session(registry: MakerRegistry) -> MakerSession:
    maker = OnlineMaker("tx_test_1", WALLET, "test", FakeGateway(), connected_at=0.0)
    registry.connect(maker)
    return MakerSession(maker)


def levels(chain_id: int = 97, sell: str = USDT, buy: str = NGNS, **body: Any) -> str:
    points = [
        {"sellAmount": "1000", "buyAmount": "1590"},
        {"sellAmount": "2000", "buyAmount": "3100"},
    ]
    return json.dumps(
        {"type": "levels", "chainId": chain_id, "sellToken": sell, "buyToken": buy}
        | {"levels": points}
        | body
    )


def error_code(reply: object) -> str:
    assert isinstance(reply, ErrorMessage), reply
    return reply.code


def test_welcome_lists_the_rfq_pairs_of_the_makers_environment_both_ways(
    sessions: MakerStreamSessions, session: MakerSession
) -> None:
    welcome = sessions.welcome(session.maker)
    # What the server sends is what the bundled client parses.
    assert parse_server_message(serialize(welcome)) == welcome
    assert [c.chain_id for c in welcome.chains] == [97]  # a test credential: test chains only
    pairs = {(p.sell_token, p.buy_token) for p in welcome.chains[0].pairs}
    assert pairs == {(USDT, NGNS), (NGNS, USDT)}  # the BOOK corridor has no RFQ pair
    assert (welcome.wallet, welcome.environment, welcome.ping_interval_ms) == (
        WALLET,
        "test",
        15_000,
    )


def test_levels_reach_the_registry(
    sessions: MakerStreamSessions, registry: MakerRegistry, session: MakerSession
) -> None:
    assert sessions.on_text(session, levels(sell=USDT.upper().replace("0X", "0x"))) is None
    key = (97, USDT.lower(), NGNS.lower())
    assert registry.fresh_curve(session.maker, key) == [(1000, 1590), (2000, 3100)]
    # An empty list withdraws the direction.
    assert sessions.on_text(session, levels(levels=[])) is None
    assert registry.fresh_curve(session.maker, key) is None


def test_unknown_fields_are_ignored_as_the_server_always_did(
    sessions: MakerStreamSessions, registry: MakerRegistry, session: MakerSession
) -> None:
    assert sessions.on_text(session, levels(comment="from a newer bot")) is None
    assert registry.fresh_curve(session.maker, (97, USDT.lower(), NGNS.lower()))


@pytest.mark.parametrize(
    "frame",
    [
        levels(chain_id=56),  # a chain of the other environment
        levels(chain_id=1),  # no such chain
        levels(sell=USDT, buy=USDT),
        levels(sell=USDT, buy=to_checksum_address("0x" + "dd" * 20)),  # no corridor
    ],
)
def test_levels_for_a_pair_the_maker_does_not_serve_are_unknown_pair(
    sessions: MakerStreamSessions, session: MakerSession, frame: str
) -> None:
    reply = sessions.on_text(session, frame)
    assert error_code(reply) == "unknown_pair"
    assert isinstance(reply, ErrorMessage)
    assert reply.ref == "levels"
    assert session.maker.levels == {}


@pytest.mark.parametrize(
    "body",
    [
        {"levels": [{"sellAmount": "10", "buyAmount": "5"}, {"sellAmount": "5", "buyAmount": "6"}]},
        {
            "levels": [
                {"sellAmount": "10", "buyAmount": "5"},
                {"sellAmount": "20", "buyAmount": "5"},
            ]
        },
        {"levels": [{"sellAmount": str(i), "buyAmount": str(i)} for i in range(1, 11)]},
        {"levels": [{"sellAmount": "1e3", "buyAmount": "5"}]},
        {"levels": [{"sellAmount": "١٢", "buyAmount": "5"}]},  # non-ASCII digits
        {"levels": [{"sellAmount": "10"}]},
        {"levels": "10:5"},
        {"chainId": "97"},  # read strictly typed, as the server always did
        {"chainId": 97.0},
        {"sellToken": None},
    ],
)
def test_malformed_levels_are_bad_message(
    sessions: MakerStreamSessions, session: MakerSession, body: dict[str, Any]
) -> None:
    reply = sessions.on_text(session, levels(**body))
    assert error_code(reply) == "bad_message"
    assert isinstance(reply, ErrorMessage)
    assert reply.ref == "levels"
    assert session.maker.levels == {}


@pytest.mark.parametrize(
    ("frame", "code", "ref"),
    [
        ("not json", "bad_message", None),
        ("[1, 2]", "bad_message", None),
        ('{"type": "dance"}', "unknown_type", "dance"),
        ('{"id": 1}', "unknown_type", None),
        ('{"type": ["levels"]}', "unknown_type", None),  # not even a string
        ('{"type": "rfq"}', "unknown_type", "rfq"),  # a server message is not the maker's
        ('{"type": "quote", "expiresAtMs": 1}', "bad_message", "quote"),  # no quoteId
        ('{"type": "ping"}', "bad_message", "ping"),
    ],
)
def test_refused_frames_get_the_documented_codes(
    sessions: MakerStreamSessions, session: MakerSession, frame: str, code: str, ref: str | None
) -> None:
    reply = sessions.on_text(session, frame)
    assert error_code(reply) == code
    assert isinstance(reply, ErrorMessage)
    assert reply.ref == ref
    assert parse_server_message(serialize(reply)) == reply  # the client can read it


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "quote", "quoteId": "mq_gone", "order": {}, "signature": "0x"},
        {"type": "decline", "quoteId": "mq_gone", "reason": "liquidity"},
    ],
)
def test_an_answer_nobody_waits_for_is_released_late_with_a_null_rfq_id(
    sessions: MakerStreamSessions, session: MakerSession, frame: dict[str, Any]
) -> None:
    reply = sessions.on_text(session, json.dumps(frame))
    assert reply == Released(quote_id="mq_gone", rfq_id=None, reason="late")
    assert isinstance(reply, Released)
    wire = serialize(reply)
    assert json.loads(wire) == {
        "type": "released",
        "quoteId": "mq_gone",
        "rfqId": None,
        "reason": "late",
    }
    assert parse_server_message(wire) == reply  # the bundled client accepts it


async def answer(
    sessions: MakerStreamSessions,
    registry: MakerRegistry,
    session: MakerSession,
    frame: dict[str, Any],
) -> MakerReply | None:
    """Ask the maker (as the auction does) and feed it `frame` while the request waits."""
    asked = asyncio.create_task(registry.ask(session.maker, REQUEST, 5.0))
    await asyncio.sleep(0)  # the request is sent and waits for its answer
    assert "mq_1" in session.maker.pending
    assert sessions.on_text(session, json.dumps(frame)) is None  # delivered: no reply
    return await asked


async def test_a_quote_for_a_request_in_flight_is_delivered_typed(
    sessions: MakerStreamSessions, registry: MakerRegistry, session: MakerSession
) -> None:
    quote = {
        "type": "quote",
        "quoteId": "mq_1",
        "expiresAtMs": 1_795_500_030_000,
        "order": ORDER.to_message(),
        "signature": "0x" + "ab" * 65,
    }
    reply = await answer(sessions, registry, session, quote)
    assert reply == QuoteReply(order=ORDER, signature=b"\xab" * 65, expires_at_ms=1_795_500_030_000)


async def test_a_decline_is_delivered_typed(
    sessions: MakerStreamSessions, registry: MakerRegistry, session: MakerSession
) -> None:
    decline = {"type": "decline", "quoteId": "mq_1", "reason": "liquidity", "maxSellAmount": "7"}
    reply = await answer(sessions, registry, session, decline)
    assert reply == DeclineReply(reason="liquidity", max_sell_amount=7)


@pytest.mark.parametrize(
    ("frame", "field"),
    [
        (
            {"type": "quote", "quoteId": "mq_1", "expiresAtMs": 1, "order": {}, "signature": "0x1"},
            "order.reactor",
        ),
        (
            {
                "type": "quote",
                "quoteId": "mq_1",
                "expiresAtMs": "1795500030000",  # a string where the document has an integer
                "order": ORDER.to_message(),
                "signature": "0x" + "ab" * 65,
            },
            "expiresAtMs",
        ),
        ({"type": "decline", "quoteId": "mq_1", "reason": "busy"}, "reason"),
    ],
)
async def test_a_malformed_answer_to_a_request_in_flight_ends_it_with_the_reason(
    sessions: MakerStreamSessions,
    registry: MakerRegistry,
    session: MakerSession,
    frame: dict[str, Any],
    field: str,
) -> None:
    reply = await answer(sessions, registry, session, frame)
    assert isinstance(reply, MalformedReply)
    assert field in reply.detail


def test_pings_are_answered_and_pongs_counted(
    sessions: MakerStreamSessions, session: MakerSession
) -> None:
    assert sessions.on_text(session, '{"type": "ping", "id": 7}') == Pong(id=7)
    assert sessions.on_text(session, '{"type": "ping", "id": "p-8"}') == Pong(id="p-8")
    assert sessions.on_text(session, '{"type": "pong", "id": 3}') is None
    assert sessions.on_text(session, '{"type": "pong", "id": 2}') is None
    assert sessions.on_text(session, '{"type": "pong", "id": "x"}') is None  # not one of ours
    assert session.last_pong == 3


# ---- the socket's life, over a real loopback WebSocket -------------------------------------


@pytest.fixture
async def stream_url(registry: MakerRegistry) -> AsyncIterator[str]:
    venue = VenueDirectory(chains={97: chain(97, "test")})
    sessions = MakerStreamSessions(registry, venue, Clock(), ping_interval_s=0.05)

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await sessions.serve(ws, maker_id="tx_test_1", wallet=WALLET, environment="test")
        return ws

    app = web.Application()
    app.router.add_get("/stream", handler)
    async with TestServer(app, host="127.0.0.1") as server:
        yield str(server.make_url("/stream"))


async def test_a_socket_is_online_from_welcome_to_close(
    stream_url: str, registry: MakerRegistry
) -> None:
    async with aiohttp.ClientSession() as client, client.ws_connect(stream_url) as ws:
        welcome = parse_server_message(await ws.receive_str(timeout=5))
        assert isinstance(welcome, Welcome)
        assert [m.wallet for m in registry.makers_for("test")] == [WALLET]
        await ws.send_bytes(b"\x00")
        refused = parse_server_message(await ws.receive_str(timeout=5))
        assert isinstance(refused, ErrorMessage)
        assert refused.code == "bad_message"
    for _ in range(100):
        if not registry.online:
            break
        await asyncio.sleep(0.01)
    assert registry.online == {}


async def test_a_second_socket_replaces_the_first(stream_url: str) -> None:
    async with aiohttp.ClientSession() as client, client.ws_connect(stream_url) as first:
        await first.receive_str(timeout=5)
        async with client.ws_connect(stream_url) as second:
            await second.receive_str(timeout=5)
            closing = await first.receive(timeout=5)
            assert closing.type == aiohttp.WSMsgType.CLOSE
            assert first.close_code == 4001


async def test_a_maker_that_misses_pings_is_disconnected(stream_url: str) -> None:
    async with aiohttp.ClientSession() as client, client.ws_connect(stream_url) as ws:
        while True:  # JSON pings arrive every 50 ms here; never answer them
            frame = await ws.receive(timeout=5)
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
        assert frame.type == aiohttp.WSMsgType.CLOSE
        assert ws.close_code == 4002
        assert frame.extra == "ping_timeout"


@dataclass
class QuietStream:
    """A stream endpoint without JSON pings (one hour apart), and the sessions behind it."""

    url: str
    sessions: MakerStreamSessions
    makers: list[tuple[str, str]]  # (credential, wallet) of each next connection


@pytest.fixture
async def quiet_stream(registry: MakerRegistry) -> AsyncIterator[QuietStream]:
    venue = VenueDirectory(chains={97: chain(97, "test")})
    sessions = MakerStreamSessions(registry, venue, Clock(), ping_interval_s=3600)
    makers: list[tuple[str, str]] = []

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(timeout=5)
        await ws.prepare(request)
        maker_id, wallet = makers.pop(0) if makers else ("tx_test_1", WALLET)
        await sessions.serve(ws, maker_id=maker_id, wallet=wallet, environment="test")
        return ws

    app = web.Application()
    app.router.add_get("/stream", handler)
    async with TestServer(app, host="127.0.0.1") as server:
        yield QuietStream(str(server.make_url("/stream")), sessions, makers)


async def round_trip(ws: aiohttp.ClientWebSocketResponse, ping_id: str) -> None:
    """A ping answered: the server has done everything it did before reading it."""
    await ws.send_str(serialize(Ping(id=ping_id)))
    while True:
        reply = parse_server_message(await ws.receive_str(timeout=5))
        if isinstance(reply, Pong) and reply.id == ping_id:
            return


async def closed_with(ws: aiohttp.ClientWebSocketResponse) -> tuple[int | None, str]:
    frame = await ws.receive(timeout=5)
    assert frame.type == aiohttp.WSMsgType.CLOSE, frame
    return ws.close_code, str(frame.extra)


async def test_a_replaced_socket_reads_4001_even_once_its_successor_is_served(
    quiet_stream: QuietStream,
) -> None:
    """The old socket is read only after the new one answered a ping: by then a server that
    dropped the TCP connection right after its close frame has been seen to (the client cannot
    answer the close frame and reports 1006)."""
    async with aiohttp.ClientSession() as client, client.ws_connect(quiet_stream.url) as first:
        await first.receive_str(timeout=5)  # welcome
        async with client.ws_connect(quiet_stream.url) as second:
            await second.receive_str(timeout=5)
            await round_trip(second, "after-welcome")
            assert await closed_with(first) == (4001, "replaced")
            await round_trip(second, "still-served")


async def test_replacements_under_a_busy_event_loop_each_close_with_4001(
    quiet_stream: QuietStream, registry: MakerRegistry
) -> None:
    """Twenty replacements in a row while another task keeps the event loop busy (2 ms of
    blocking work per step): every replaced socket reads 4001 `replaced`."""

    async def hog() -> None:
        while True:
            until = time.perf_counter() + 0.002
            while time.perf_counter() < until:
                pass
            await asyncio.sleep(0)

    busy = asyncio.create_task(hog())
    try:
        async with aiohttp.ClientSession() as client:
            previous = await client.ws_connect(quiet_stream.url)
            await previous.receive_str(timeout=5)
            for round_ in range(20):
                current = await client.ws_connect(quiet_stream.url)
                await current.receive_str(timeout=5)
                await round_trip(current, f"round-{round_}")
                assert await closed_with(previous) == (4001, "replaced"), round_
                await previous.close()
                previous = current
            await previous.close()
    finally:
        busy.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await busy
    assert registry.online == {}


async def test_a_withdrawn_credential_ends_its_connection_with_4003(
    quiet_stream: QuietStream, registry: MakerRegistry
) -> None:
    async with aiohttp.ClientSession() as client, client.ws_connect(quiet_stream.url) as ws:
        await ws.receive_str(timeout=5)
        quiet_stream.sessions.credential_withdrawn("tx_test_other", "revoked")
        await round_trip(ws, "another-credential-was-revoked")  # not this one's
        quiet_stream.sessions.credential_withdrawn("tx_test_1", "suspended")
        assert await closed_with(ws) == (4003, "credential_suspended")
    assert registry.online == {}


async def test_a_stopping_server_ends_every_socket_with_1001_and_waits_for_the_handshakes(
    quiet_stream: QuietStream, registry: MakerRegistry
) -> None:
    other = to_checksum_address("0x" + "78" * 20)
    quiet_stream.makers.extend([("tx_test_1", WALLET), ("tx_test_2", other)])
    async with (
        aiohttp.ClientSession() as client,
        client.ws_connect(quiet_stream.url) as one,
        client.ws_connect(quiet_stream.url) as two,
    ):
        for ws in (one, two):
            await ws.receive_str(timeout=5)
        closing = asyncio.create_task(quiet_stream.sessions.close_all(timeout_s=30))
        for ws in (one, two):
            # The clients answer the close frame here; close_all returns after that.
            assert await closed_with(ws) == (1001, "server_stopping")
        async with asyncio.timeout(10):
            await closing
    assert registry.online == {}
