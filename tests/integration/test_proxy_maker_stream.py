"""A maker bot (makers/client.py) on the maker stream through `rfqsim proxy`: the WebSocket is
relayed frame by frame both ways, so the bot is welcomed, asked, quotes a real signed order that
the taker (also through the proxy) receives, and is told its hold was released on cancel."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from contracts.orders import RfqOrder, sign_order
from makers.client import MakerClient
from rfqkit.maker_protocol import MakerQuote, OrderTerms, Released, Rfq
from rfqkit.wallets import demo_wallet, maker_wallet
from tests.integration.maker_keys import create_key
from tests.integration.proxy_process import proxy, summary
from tests.integration.serve_process import Served, serve

pytestmark = pytest.mark.integration
WAIT_S = 30.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    env = {**os.environ, "RFQSIM_TRUSTED_PROXY": "true"}
    with serve(tmp_path_factory.mktemp("stream"), "--no-makers", env=env) as running:
        yield running


async def test_a_maker_bot_quotes_and_is_released_through_the_proxy(
    served: Served, tmp_path: Path
) -> None:
    chain = next(c for c in served.info["chains"] if c["chain_id"] == 97)
    tokens = {t["symbol"]: t["address"] for t in chain["tokens"]}
    usdt, ngns = tokens["USDT"], tokens["NGNS"]
    maker = maker_wallet(0)
    asked: asyncio.Queue[Rfq] = asyncio.Queue()
    released: asyncio.Queue[Released] = asyncio.Queue()

    async def on_rfq(rfq: Rfq) -> MakerQuote:
        asked.put_nowait(rfq)
        assert rfq.maker_receives is not None
        assert rfq.fee_amount is not None
        expires_ms = rfq.min_expires_at_ms + 1000
        order = RfqOrder(
            reactor=rfq.reactor,
            maker=maker.address,
            taker=rfq.taker,
            inputToken=rfq.buy_token,
            inputAmount=1500 * 10**6,
            outputToken=rfq.sell_token,
            outputAmount=int(rfq.maker_receives),
            feeAmount=int(rfq.fee_amount),
            nonce=987654321,
            deadline=expires_ms // 1000 + 120,
        )
        signature = sign_order(maker.private_key, order, 97, rfq.signature_transfer)
        return MakerQuote(
            quote_id=rfq.quote_id,
            expires_at_ms=expires_ms,
            order=OrderTerms.from_order(order),
            signature="0x" + signature.hex(),
        )

    async def on_released(message: Released) -> None:
        released.put_nowait(message)

    with proxy(served.api_url, tmp_path / "report") as running:
        async with aiohttp.ClientSession() as session:
            maker_key = await create_key(
                session,
                running.url,
                partner="proxy-stream",
                environment="test",
                scopes=["maker:stream"],
                maker_wallet=maker.address,
            )
            taker_key = await create_key(
                session, running.url, partner="t", environment="test", scopes=["trades:write"]
            )
            async with MakerClient(
                running.url, maker_key, on_rfq=on_rfq, on_released=on_released, reconnect=False
            ) as bot:
                welcome = bot.welcome
                assert welcome is not None
                assert 97 in bot.chains
                await bot.publish_levels(97, usdt, ngns, [(10**20, 1590 * 10**8)])
                body = {
                    "chainId": 97,
                    "sellToken": usdt,
                    "buyToken": ngns,
                    "sellAmount": str(10**18),
                    "taker": demo_wallet(2).address,
                    "restrictedLiquidityWallets": [maker.address],
                }
                headers = {"X-API-Key": taker_key}
                async with session.post(
                    f"{running.url}/v2/rfq/request", json=body, headers=headers
                ) as resp:
                    data = (await resp.json())["data"]
                assert data["status"] == "quoted", data
                rfq = await asyncio.wait_for(asked.get(), WAIT_S)
                assert rfq.rfq_id == data["rfqId"]
                assert data["quote"]["orders"][0]["maker"] == maker.address
                assert data["quote"]["buyAmount"] == str(1500 * 10**6)
                async with session.post(
                    f"{running.url}/v2/rfq/{data['rfqId']}/cancel", headers=headers
                ) as resp:
                    assert resp.status == 200, await resp.text()
                let_go = await asyncio.wait_for(released.get(), WAIT_S)
                assert let_go.rfq_id == data["rfqId"]
        assert running.stop() == 0
    report = running.report()
    assert report["violations"] == [], summary(report["violations"])
