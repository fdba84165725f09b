"""The server side of the maker stream (docs/maker-protocol.md), driven by a raw WebSocket
client against a real `rfqsim serve --no-makers`."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from contracts.orders import RfqOrder, sign_order
from rfqkit.wallets import demo_wallet, maker_wallet
from tests.integration.maker_keys import create_key
from tests.integration.serve_process import Served, serve

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("stream"), "--no-makers") as running:
        yield running


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def maker_key(
    session: aiohttp.ClientSession, api: str, index: int, environment: str = "test"
) -> str:
    return await create_key(
        session,
        api,
        partner="stream-tests",
        environment=environment,
        scopes=["maker:stream"],
        maker_wallet=maker_wallet(index).address,
    )


def chain(served: Served, chain_id: int) -> dict[str, Any]:
    return next(c for c in served.info["chains"] if c["chain_id"] == chain_id)


def token(served: Served, chain_id: int, symbol: str) -> str:
    return str(
        next(t["address"] for t in chain(served, chain_id)["tokens"] if t["symbol"] == symbol)
    )


async def receive(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    async with asyncio.timeout(5):
        while True:
            message = await ws.receive_json()
            if message["type"] == kind:
                return dict(message)


async def test_handshake_needs_a_maker_credential(
    served: Served, session: aiohttp.ClientSession
) -> None:
    url = served.api_url + "/v2/maker/stream"
    async with session.get(url) as resp:
        assert resp.status == 401
        body = await resp.json()
        assert body["error"]["request_id"] == resp.headers["X-Request-Id"]
    taker = await create_key(
        session, served.api_url, partner="p", environment="test", scopes=["trades:read"]
    )
    async with session.get(url, headers={"Authorization": f"Bearer {taker}"}) as resp:
        assert resp.status == 403
        assert (await resp.json())["error"]["code"] == "forbidden"


async def test_welcome_lists_the_environment_chains_and_pairs(
    served: Served, session: aiohttp.ClientSession
) -> None:
    key = await maker_key(session, served.api_url, 0)
    async with session.ws_connect(
        served.api_url + "/v2/maker/stream", headers={"X-API-Key": key}
    ) as ws:
        welcome = await receive(ws, "welcome")
    assert welcome["wallet"] == maker_wallet(0).address
    assert welcome["environment"] == "test"
    assert [c["chainId"] for c in welcome["chains"]] == [97]
    info = welcome["chains"][0]
    assert info["reactor"] == chain(served, 97)["contracts"]["reactor"]
    pairs = {(p["sellToken"], p["buyToken"]) for p in info["pairs"]}
    usdt, ngns = token(served, 97, "USDT"), token(served, 97, "NGNS")
    assert {(usdt, ngns), (ngns, usdt)} <= pairs
    assert (token(served, 97, "USDC"), ngns) not in pairs  # BOOK-mode corridor: no RFQ pair
    assert len(pairs) == 6


async def test_bad_messages_get_error_replies(
    served: Served, session: aiohttp.ClientSession
) -> None:
    key = await maker_key(session, served.api_url, 1)
    usdt, ngns = token(served, 97, "USDT"), token(served, 97, "NGNS")
    async with session.ws_connect(
        served.api_url + "/v2/maker/stream", headers={"X-API-Key": key}
    ) as ws:
        await receive(ws, "welcome")
        await ws.send_str("not json")
        assert (await receive(ws, "error"))["code"] == "bad_message"
        await ws.send_json({"type": "dance"})
        assert (await receive(ws, "error"))["code"] == "unknown_type"
        await ws.send_json(
            {"type": "levels", "chainId": 56, "sellToken": usdt, "buyToken": ngns, "levels": []}
        )
        assert (await receive(ws, "error"))["code"] == "unknown_pair"  # a test key on a live chain
        decreasing = [{"sellAmount": "10", "buyAmount": "5"}, {"sellAmount": "5", "buyAmount": "6"}]
        await ws.send_json(
            {
                "type": "levels",
                "chainId": 97,
                "sellToken": usdt,
                "buyToken": ngns,
                "levels": decreasing,
            }
        )
        assert (await receive(ws, "error"))["code"] == "bad_message"
        await ws.send_json(
            {"type": "quote", "quoteId": "mq_unknown", "order": {}, "signature": "0x"}
        )
        late = await receive(ws, "released")
        assert (late["quoteId"], late["reason"]) == ("mq_unknown", "late")
        await ws.send_json({"type": "ping", "id": 7})
        assert (await receive(ws, "pong"))["id"] == 7


async def ladder_depth(session: aiohttp.ClientSession, api: str, sell: str, buy: str) -> int:
    async with session.get(f"{api}/v2/rfq/levels", params={"chainId": "97"}) as resp:
        pairs = (await resp.json())["data"]["pairs"]
    pair = next(p for p in pairs if p["sellToken"] == sell and p["buyToken"] == buy)
    return int(pair["maxSellAmount"])


async def test_levels_feed_the_ladder_and_vanish_on_disconnect(
    served: Served, session: aiohttp.ClientSession
) -> None:
    key = await maker_key(session, served.api_url, 2)
    usdt, ngns = token(served, 97, "USDT"), token(served, 97, "NGNS")
    levels = [{"sellAmount": str(10**18), "buyAmount": str(1590 * 10**6)}]
    async with session.ws_connect(
        served.api_url + "/v2/maker/stream", headers={"X-API-Key": key}
    ) as ws:
        await receive(ws, "welcome")
        await ws.send_json(
            {"type": "levels", "chainId": 97, "sellToken": usdt, "buyToken": ngns, "levels": levels}
        )
        for _ in range(40):  # the ladder is cached ~2 s
            if (
                await ladder_depth(session, served.api_url, usdt, ngns)
                == 10**18 + 10**18 * 5 // 10_000
            ):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the published level never reached the ladder")
    for _ in range(40):
        if await ladder_depth(session, served.api_url, usdt, ngns) == 0:
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("a disconnected maker's levels stayed on the ladder")


async def round_trip(ws: aiohttp.ClientWebSocketResponse, ping_id: str) -> None:
    """A ping answered: the server did everything it was going to do before reading it."""
    await ws.send_json({"type": "ping", "id": ping_id})
    while (await receive(ws, "pong"))["id"] != ping_id:
        pass


async def closed_with(ws: aiohttp.ClientWebSocketResponse) -> tuple[int | None, str]:
    frame = await ws.receive(timeout=5)
    assert frame.type == aiohttp.WSMsgType.CLOSE, frame
    return ws.close_code, str(frame.extra)


async def test_a_second_connection_replaces_the_first(
    served: Served, session: aiohttp.ClientSession
) -> None:
    """The first socket is read only once the second answered a ping: a server that dropped the
    TCP connection right after its close frame has been seen to by then, and the client, which
    could not answer the close frame, would report 1006."""
    key = await maker_key(session, served.api_url, 3)
    url = served.api_url + "/v2/maker/stream"
    async with session.ws_connect(url, headers={"X-API-Key": key}) as first:
        await receive(first, "welcome")
        async with session.ws_connect(url, headers={"X-API-Key": key}) as second:
            await receive(second, "welcome")
            await round_trip(second, "served")
            assert await closed_with(first) == (4001, "replaced")


async def test_a_credential_revoked_while_connected_ends_its_stream_with_4003(
    served: Served, session: aiohttp.ClientSession
) -> None:
    key = await maker_key(session, served.api_url, 4)
    url = served.api_url + "/v2/maker/stream"
    async with session.ws_connect(url, headers={"X-API-Key": key}) as ws:
        welcome = await receive(ws, "welcome")
        revoke = f"{served.api_url}/_sim/keys/{welcome['makerId']}/revoke"
        async with session.post(revoke) as resp:
            assert resp.status == 200, await resp.text()
        assert await closed_with(ws) == (4003, "credential_revoked")
    async with session.get(url, headers={"X-API-Key": key}) as again:
        assert again.status == 401


async def test_a_stopping_server_ends_the_stream_with_1001(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    with serve(tmp_path, "--no-makers") as running:
        key = await maker_key(session, running.api_url, 5)
        url = running.api_url + "/v2/maker/stream"
        async with session.ws_connect(url, headers={"X-API-Key": key}) as ws:
            await receive(ws, "welcome")
            running.process.send_signal(signal.SIGTERM)
            assert await closed_with(ws) == (1001, "server_stopping")
        assert await asyncio.to_thread(running.process.wait, 20) == 0


async def test_a_signed_quote_is_returned_to_the_taker_and_the_rfq_message_is_complete(
    served: Served, session: aiohttp.ClientSession
) -> None:
    """One hand-written maker answers a keyed firm request; the quote carries its order."""
    maker = maker_wallet(0)
    key = await maker_key(session, served.api_url, 0)
    taker_key = await create_key(
        session, served.api_url, partner="t", environment="test", scopes=["trades:write"]
    )
    usdt, ngns = token(served, 97, "USDT"), token(served, 97, "NGNS")
    contracts = chain(served, 97)["contracts"]
    async with session.ws_connect(
        served.api_url + "/v2/maker/stream", headers={"X-API-Key": key}
    ) as ws:
        await receive(ws, "welcome")
        await ws.send_json(
            {
                "type": "levels",
                "chainId": 97,
                "sellToken": usdt,
                "buyToken": ngns,
                "levels": [{"sellAmount": str(10**20), "buyAmount": str(1590 * 10**8)}],
            }
        )
        body = {
            "chainId": 97,
            "sellToken": usdt,
            "buyToken": ngns,
            "sellAmount": str(10**18),
            "taker": demo_wallet(2).address,
        }
        request = asyncio.create_task(
            session.post(
                f"{served.api_url}/v2/rfq/request", json=body, headers={"X-API-Key": taker_key}
            )
        )
        rfq = await receive(ws, "rfq")
        assert rfq["kind"] == "exact_input"
        assert rfq["taker"] == demo_wallet(2).address
        assert rfq["reactor"] == contracts["reactor"]
        receives = int(rfq["makerReceives"])
        assert receives + int(rfq["feeAmount"]) <= 10**18
        assert int(rfq["feeAmount"]) == receives * rfq["feeBps"] // 10_000
        expires_ms = rfq["minExpiresAtMs"] + 1000
        order = RfqOrder(
            reactor=contracts["reactor"],
            maker=maker.address,
            taker=rfq["taker"],
            inputToken=ngns,
            inputAmount=1500 * 10**6,
            outputToken=usdt,
            outputAmount=receives,
            feeAmount=int(rfq["feeAmount"]),
            nonce=123456789,
            deadline=expires_ms // 1000 + 120,
        )
        signature = sign_order(maker.private_key, order, 97, contracts["signature_transfer"])
        await ws.send_json(
            {
                "type": "quote",
                "quoteId": rfq["quoteId"],
                "expiresAtMs": expires_ms,
                "order": order.to_message(),
                "signature": "0x" + signature.hex(),
            }
        )
        async with await request as resp:
            data = (await resp.json())["data"]
    assert data["status"] == "quoted", data
    assert data["quote"]["orders"][0]["maker"] == maker.address
    assert data["quote"]["buyAmount"] == str(1500 * 10**6)
    assert data["quote"]["signature"] == "0x" + signature.hex()
    assert json.dumps(data).count("0x" + signature.hex()) == 2  # top level + orders[0]


async def test_a_maker_that_disconnects_mid_auction_yields_no_quote(
    served: Served, session: aiohttp.ClientSession
) -> None:
    key = await maker_key(session, served.api_url, 1)
    taker_key = await create_key(
        session, served.api_url, partner="t2", environment="test", scopes=["trades:write"]
    )
    usdt, ngns = token(served, 97, "USDT"), token(served, 97, "NGNS")
    ws = await session.ws_connect(served.api_url + "/v2/maker/stream", headers={"X-API-Key": key})
    await receive(ws, "welcome")
    await ws.send_json(
        {
            "type": "levels",
            "chainId": 97,
            "sellToken": usdt,
            "buyToken": ngns,
            "levels": [{"sellAmount": str(10**20), "buyAmount": str(1590 * 10**8)}],
        }
    )
    body = {
        "chainId": 97,
        "sellToken": usdt,
        "buyToken": ngns,
        "sellAmount": str(10**18),
        "taker": demo_wallet(1).address,
    }
    request = asyncio.create_task(
        session.post(
            f"{served.api_url}/v2/rfq/request", json=body, headers={"X-API-Key": taker_key}
        )
    )
    await receive(ws, "rfq")
    await ws.close()  # gone with the rfq unanswered
    async with await request as resp:
        data = (await resp.json())["data"]
    assert data["status"] == "no_quote"
    assert data["reason"] == "no_valid_quote"  # it was online when asked, then gave nothing
