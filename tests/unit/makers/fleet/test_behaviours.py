"""The misbehaviours a SimulatedMaker can be configured with, each seen from the stream: silent
never answers, decline names a smaller size, bad_signature signs with another key, underfunded
quotes more than it holds, flaky declines its fraction, late answers after ``replyBy``, and a
fixed latency delays the answer."""

from __future__ import annotations

from rfqkit.maker_protocol import Decline, Levels, MakerQuote
from tests.unit.makers.fake_stream import now_ms, rfq
from tests.unit.makers.fleet.fakes import (
    E6,
    E18,
    NGNS,
    USDT,
    WALLETS,
    FakeChain,
    StartMaker,
    maker_config,
    signer,
    until,
)


async def test_silent_never_answers(start_maker: StartMaker) -> None:
    maker, conn = await start_maker(maker_config(behaviour="silent"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    await until(conn, lambda: maker.stats.silent == 1)
    assert [m for m in await conn.barrier() if not isinstance(m, Levels)] == []


async def test_decline_behaviour_names_a_smaller_size(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="decline"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=10 * E18))
    decline = await conn.expect(Decline)
    assert decline.reason == "liquidity"
    assert decline.max_sell_amount == 5 * E18


async def test_bad_signature_does_not_recover_to_the_wallet(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="bad_signature"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    quote = await conn.expect(MakerQuote)
    assert quote.order.maker == WALLETS[0].address
    assert signer(quote, conn.welcome) != WALLETS[0].address


async def test_underfunded_quotes_more_than_it_holds(
    chain: FakeChain, start_maker: StartMaker
) -> None:
    chain.fund(WALLETS[0].address, usdt=1_000 * E18, ngns=1_000 * E6)
    _, conn = await start_maker(maker_config(behaviour="underfunded"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=2 * E18))
    quote = await conn.expect(MakerQuote)
    assert quote.order.input_amount > 1_000 * E6  # about 3198 NGNS from a 1000 NGNS balance


async def test_flaky_declines_its_fraction(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="flaky", flaky_decline_fraction=1.0))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    assert (await conn.expect(Decline)).reason == "unavailable"


async def test_late_answers_after_reply_by(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="late"))
    request = rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18, reply_budget_ms=60)
    await conn.send(request)
    while True:
        arrived, message = await conn.receive_timed()
        if isinstance(message, MakerQuote):
            break
    assert arrived > request.reply_by_ms


async def test_latency_delays_the_answer(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(latency={"kind": "fixed", "ms": 80}))
    sent = now_ms()
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    while True:
        arrived, message = await conn.receive_timed()
        if isinstance(message, MakerQuote):
            break
    assert arrived - sent >= 75
