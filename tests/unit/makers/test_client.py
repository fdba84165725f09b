"""MakerClient against an in-test server playing the venue's side of the maker stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from contracts.orders import RfqOrder, recover_order_signer, sign_order
from makers.client import (
    Backoff,
    MakerAuthError,
    MakerClient,
    MakerConnectionError,
    MakerReplaced,
    stream_url,
)
from rfqkit.maker_protocol import (
    Decline,
    ErrorMessage,
    Expired,
    Filled,
    Levels,
    MakerQuote,
    OrderTerms,
    Ping,
    Pong,
    Released,
    Rfq,
    Welcome,
)
from rfqkit.wallets import maker_wallet
from tests.unit.makers.fake_stream import ADDR, FakeStreamServer, rfq, welcome

WALLET = maker_wallet(0)
KEY = "tx_live_maker0.secret"
TAKER_KEY = "tx_live_taker.secret"
FAST = Backoff(initial_s=0.01, max_s=0.05)

MakeClient = Callable[..., Awaitable[MakerClient]]


@pytest.fixture
async def server() -> AsyncIterator[FakeStreamServer]:
    fake = FakeStreamServer(
        lambda key, wallet: welcome(wallet, levels_min_interval_ms=150),
        keys={KEY: WALLET.address},
        forbidden=frozenset({TAKER_KEY}),
    )
    await fake.start()
    try:
        yield fake
    finally:
        await fake.close()


@pytest.fixture
async def make_client(server: FakeStreamServer) -> AsyncIterator[MakeClient]:
    clients: list[MakerClient] = []

    async def make(key: str = KEY, start: bool = True, **kwargs: Any) -> MakerClient:
        kwargs.setdefault("backoff", FAST)
        client = MakerClient(server.url, key, **kwargs)
        clients.append(client)
        if start:
            await client.start(wait_s=10)
        return client

    try:
        yield make
    finally:
        for client in clients:
            await client.close()


def test_stream_url_accepts_base_and_ws_urls() -> None:
    assert stream_url("http://127.0.0.1:8080") == "ws://127.0.0.1:8080/v2/maker/stream"
    assert stream_url("https://venue.example/") == "wss://venue.example/v2/maker/stream"
    assert stream_url("ws://h:1/v2/maker/stream") == "ws://h:1/v2/maker/stream"
    with pytest.raises(ValueError, match="not an http"):
        stream_url("ftp://h")


async def test_welcome_exposes_chains_and_pairs(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    client = await make_client()
    conn = await server.next_connection()
    assert conn.ws.headers is not None
    assert server.handshakes == [KEY]
    assert client.connected
    assert client.welcome is not None
    assert client.welcome.wallet == WALLET.address
    assert client.chains == [56]
    pairs = client.pairs(56)
    assert {(p.sell_token, p.buy_token) for p in pairs} == {
        (ADDR["USDT"], ADDR["NGNS"]),
        (ADDR["NGNS"], ADDR["USDT"]),
    }
    assert client.pairs(97) == []
    assert abs(client.server_time_ms() - client.welcome.server_time_ms) < 5_000


async def test_x_api_key_header_is_supported(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    await make_client(auth_header="x-api-key")
    assert server.handshakes == [KEY]


async def test_rfq_handler_quote_is_sent_and_recovers_to_the_maker(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    seen: list[Rfq] = []

    async def on_rfq(request: Rfq) -> MakerQuote:
        seen.append(request)
        assert request.maker_receives is not None
        assert request.fee_amount is not None
        order = RfqOrder(
            reactor=request.reactor,
            maker=WALLET.address,
            taker=request.taker,
            inputToken=request.buy_token,
            inputAmount=1_599_000_000,
            outputToken=request.sell_token,
            outputAmount=request.maker_receives,
            feeAmount=request.fee_amount,
            nonce=12345,
            deadline=request.max_expires_at_ms // 1000 + 60,
        )
        signature = sign_order(
            WALLET.private_key, order, request.chain_id, request.signature_transfer
        )
        return MakerQuote(
            quote_id=request.quote_id,
            expires_at_ms=request.max_expires_at_ms,
            order=OrderTerms.from_order(order),
            signature="0x" + signature.hex(),
        )

    await make_client(on_rfq=on_rfq)
    conn = await server.next_connection()
    request = rfq(conn.welcome, sell=ADDR["USDT"], buy=ADDR["NGNS"], amount=10**18)
    await conn.send(request)
    quote = await conn.expect(MakerQuote)
    assert seen == [request]
    assert quote.quote_id == request.quote_id
    order = quote.order.to_order()
    assert order.outputAmount == 10**18
    assert order.inputToken.lower() == ADDR["NGNS"]
    signer = recover_order_signer(
        order, 56, ADDR["signature_transfer"], bytes.fromhex(quote.signature[2:])
    )
    assert signer == WALLET.address


async def test_decline_is_sent_and_none_stays_silent(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    async def on_rfq(request: Rfq) -> Decline | None:
        if request.quote_id == "mq_quiet":
            return None
        return Decline(quote_id=request.quote_id, reason="liquidity", max_sell_amount=5 * 10**17)

    await make_client(on_rfq=on_rfq)
    conn = await server.next_connection()
    await conn.send(
        rfq(conn.welcome, sell=ADDR["USDT"], buy=ADDR["NGNS"], amount=1, quote_id="mq_quiet")
    )
    await conn.send(rfq(conn.welcome, sell=ADDR["USDT"], buy=ADDR["NGNS"], amount=10**18))
    decline = await conn.expect(Decline)
    assert decline == Decline(quote_id="mq_1", reason="liquidity", max_sell_amount=5 * 10**17)
    assert await conn.barrier() == []  # nothing for mq_quiet


async def test_server_ping_is_answered_with_pong(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    await make_client()
    conn = await server.next_connection()
    await conn.send(Ping(id=41))
    assert await conn.expect(Pong) == Pong(id=41)
    await conn.send(Ping(id="p-42"))
    assert await conn.expect(Pong) == Pong(id="p-42")


async def test_notifications_reach_their_callbacks(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    got: asyncio.Queue[object] = asyncio.Queue()

    async def record(message: object) -> None:
        got.put_nowait(message)

    await make_client(on_filled=record, on_expired=record, on_released=record, on_error=record)
    conn = await server.next_connection()
    messages: list[Filled | Expired | Released | ErrorMessage] = [
        Filled(
            quote_id="mq_1",
            rfq_id="rfq_1",
            chain_id=56,
            order_hash="0x" + "ab" * 32,
            tx_hash="0x" + "cd" * 32,
            maker_gave=1,
            maker_received=2,
            fee_amount=0,
        ),
        Expired(quote_id="mq_2", rfq_id="rfq_2"),
        Released(quote_id="mq_3", rfq_id="rfq_3", reason="invalid", detail="nonce used"),
        ErrorMessage(code="too_frequent", message="levels coalesced", ref="levels"),
    ]
    for message in messages:
        await conn.send(message)
    received = [await asyncio.wait_for(got.get(), 10) for _ in messages]
    assert sorted(map(repr, received)) == sorted(map(repr, messages))


async def test_a_late_release_with_a_null_rfq_id_reaches_its_callback(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    """The server's answer to a quote for an unknown or closed quoteId, byte for byte."""
    got: asyncio.Queue[Released] = asyncio.Queue()

    async def record(message: Released) -> None:
        got.put_nowait(message)

    await make_client(on_released=record)
    conn = await server.next_connection()
    await conn.ws.send_str('{"type":"released","quoteId":"mq_9","rfqId":null,"reason":"late"}')
    released = await asyncio.wait_for(got.get(), 10)
    assert (released.quote_id, released.rfq_id, released.reason) == ("mq_9", None, "late")


async def test_levels_are_coalesced_to_the_min_interval(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    client = await make_client()
    conn = await server.next_connection()
    usdt, ngns = ADDR["USDT"], ADDR["NGNS"]
    assert await client.publish_levels(56, usdt, ngns, [(10**18, 1_599_000_000)])
    assert await client.publish_levels(56, usdt, ngns, [(10**18, 1_598_000_000)])
    assert await client.publish_levels(56, usdt, ngns, [(10**18, 1_597_000_000)])
    # The other direction has its own interval: sent at once.
    assert await client.publish_levels(56, ngns, usdt, [(1_600_000_000, 999 * 10**15)])
    first = await conn.expect(Levels)
    other = await conn.expect(Levels)
    newest = await conn.expect(Levels)
    arrivals = [first, other, newest]
    assert [lv.levels[0].buy_amount for lv in arrivals] == [
        1_599_000_000,
        999 * 10**15,
        1_597_000_000,
    ]
    assert await conn.barrier() == []  # the middle update was coalesced away


async def test_unchanged_levels_are_not_sent_again(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    client = await make_client()
    conn = await server.next_connection()
    usdt, ngns = ADDR["USDT"], ADDR["NGNS"]
    assert await client.publish_levels(56, usdt, ngns, [(10**18, 1_599_000_000)])
    first = await conn.expect(Levels)
    await asyncio.sleep(0.2)  # past levelsMinIntervalMs (150 ms)
    assert await client.publish_levels(56, usdt, ngns, [(10**18, 1_599_000_000)])
    assert await conn.barrier() == []  # unchanged: well inside half of levelsMaxAgeMs
    assert await client.publish_levels(56, usdt, ngns, [(10**18, 1_599_000_000)], resend_after_s=0)
    assert await conn.expect(Levels) == first  # a refresh asked for


async def test_sync_returns_once_the_server_has_read_every_frame_sent_before_it(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    client = await make_client()
    conn = await server.next_connection()
    usdt, ngns = ADDR["USDT"], ADDR["NGNS"]
    assert await client.publish_levels(56, usdt, ngns, [(10**18, 1_599_000_000)])
    assert await client.publish_levels(56, ngns, usdt, [(1_600_000_000, 999 * 10**15)])
    await client.sync()
    # Both levels were read before the server answered the sync's ping: queued already.
    read = [conn.inbox.get_nowait()[1] for _ in range(conn.inbox.qsize())]
    assert [(lv.sell_token, lv.buy_token) for lv in read if isinstance(lv, Levels)] == [
        (usdt, ngns),
        (ngns, usdt),
    ]
    await client.sync()  # each sync has an id of its own: a second one is answered too


async def test_sync_without_a_connection_or_when_it_closes_fails(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    idle = await make_client(start=False)
    with pytest.raises(MakerConnectionError):
        await idle.sync()
    client = await make_client(reconnect=False)
    conn = await server.next_connection()
    # A server that does not answer, then goes away: the sync fails instead of waiting on.
    server.answer_pings = False
    waiting = asyncio.ensure_future(client.sync(wait_s=None))
    assert isinstance(await conn.receive(), Ping)  # read, not answered
    await conn.close()
    with pytest.raises(MakerConnectionError):
        await waiting


async def test_invalid_levels_are_refused_locally(make_client: MakeClient) -> None:
    client = await make_client()
    with pytest.raises(ValueError, match="increase strictly"):
        await client.publish_levels(56, ADDR["USDT"], ADDR["NGNS"], [(2, 2), (1, 3)])
    with pytest.raises(ValueError, match="at most 9"):
        await client.publish_levels(56, ADDR["USDT"], ADDR["NGNS"], [(i, i) for i in range(1, 11)])


async def test_reconnects_after_the_server_drops_the_socket(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    welcomes: asyncio.Queue[Welcome] = asyncio.Queue()
    disconnects: list[bool] = []

    async def on_welcome(message: Welcome) -> None:
        welcomes.put_nowait(message)

    async def on_disconnect() -> None:
        disconnects.append(True)

    client = await make_client(on_welcome=on_welcome, on_disconnect=on_disconnect)
    first = await server.next_connection()
    await first.close(code=1011)
    second = await server.next_connection()
    assert second is not first
    await client.wait_connected(10)
    assert client.connections == 2
    assert (await welcomes.get()).maker_id == (await welcomes.get()).maker_id
    assert disconnects == [True]
    await second.send(Ping(id=1))
    assert await second.expect(Pong) == Pong(id=1)


async def test_no_reconnect_when_disabled(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    client = await make_client(reconnect=False)
    conn = await server.next_connection()
    await conn.close()
    with pytest.raises(MakerConnectionError):
        await client.wait_connected(10)
    assert server.handshakes == [KEY]


@pytest.mark.parametrize(
    ("key", "status", "code"),
    [("tx_live_wrong", 401, "unauthorized"), (TAKER_KEY, 403, "forbidden")],
)
async def test_handshake_refusal_raises_without_retry(
    server: FakeStreamServer, make_client: MakeClient, key: str, status: int, code: str
) -> None:
    client = await make_client(key=key, start=False)
    with pytest.raises(MakerAuthError) as caught:
        await client.start(wait_s=10)
    assert caught.value.status == status
    assert caught.value.code == code
    assert caught.value.request_id == "req_fake"
    assert server.handshakes == [key]
    assert not client.connected


async def test_replaced_connection_is_not_fought_for(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    client = await make_client()
    conn = await server.next_connection()
    await conn.close(code=4001, reason=b"replaced")
    with pytest.raises(MakerReplaced):
        await client.wait_connected(10)
    assert server.handshakes == [KEY]


async def test_connection_refused_times_out_cleanly() -> None:
    client = MakerClient("http://127.0.0.1:9", KEY, backoff=FAST)  # discard port: refused
    with pytest.raises(MakerConnectionError, match=r"127\.0\.0\.1:9"):
        await client.start(wait_s=0.2)
    await client.close()


async def test_close_cancels_a_running_handler(
    server: FakeStreamServer, make_client: MakeClient
) -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def on_rfq(request: Rfq) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    client = await make_client(on_rfq=on_rfq)
    conn = await server.next_connection()
    await conn.send(rfq(conn.welcome, sell=ADDR["USDT"], buy=ADDR["NGNS"], amount=10**18))
    await asyncio.wait_for(started.wait(), 10)
    await client.close()
    assert cancelled.is_set()
    assert not client.connected
    await asyncio.wait_for(conn.closed.wait(), 10)
