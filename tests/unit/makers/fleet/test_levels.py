"""Levels a SimulatedMaker publishes: its start returns only once the server has read levels for
every direction it serves; between its periodic rounds a quote republishes only the direction
whose inventory it changed (and again when the commitment is released), and levels a quote does
not change (an underfunded maker's) are not republished."""

from __future__ import annotations

import asyncio

from makers.config import MakerConfig
from makers.fleet import SimulatedMaker
from rfqkit.maker_protocol import Expired, Levels, MakerQuote
from tests.unit.makers.fake_stream import FakeConnection, FakeStreamServer, rfq
from tests.unit.makers.fleet.fakes import (
    E6,
    E18,
    FAST,
    NGNS,
    SPEC,
    USDT,
    FakeChain,
    levels_by_direction,
    maker_config,
    until,
)


async def quiet_maker(
    server: FakeStreamServer, chain: FakeChain, config: MakerConfig
) -> tuple[SimulatedMaker, FakeConnection]:
    """A started maker whose periodic full rounds are a minute apart, after its start-up
    rounds settled."""
    maker = SimulatedMaker(
        config,
        url=server.url,
        api_keys=["tx_live_maker0"],
        chains={56: chain},
        backoff=FAST,
        publish_interval_s=60,
    )
    await maker.start(wait_s=10)
    conn = await server.next_connection()
    await levels_by_direction(conn)
    await asyncio.sleep(0.05)
    await conn.barrier()
    return maker, conn


async def test_the_start_returns_once_the_server_has_read_every_directions_levels(
    server: FakeStreamServer, chain: FakeChain
) -> None:
    maker = SimulatedMaker(
        maker_config(),
        url=server.url,
        api_keys=["tx_live_maker0"],
        chains={56: chain},
        backoff=FAST,
        publish_interval_s=60,  # no periodic round to publish them later
    )
    server.read_delay_s = 0.05  # a loaded venue: levels sent are not read at once
    try:
        await maker.start(wait_s=10)
        conn = server.connections[-1]
        # No waiting: what the server had read when the start returned is queued already.
        read = [conn.inbox.get_nowait()[1] for _ in range(conn.inbox.qsize())]
        directions = {
            (m.sell_token.lower(), m.buy_token.lower())
            for m in read
            if isinstance(m, Levels) and m.levels
        }
        assert directions == {(USDT, NGNS), (NGNS, USDT)}
    finally:
        await maker.close()


async def test_a_quote_republishes_only_the_direction_it_changed(
    server: FakeStreamServer, chain: FakeChain
) -> None:
    maker, conn = await quiet_maker(server, chain, maker_config())
    try:
        inventory = 1_000_000 * E6
        request = rfq(conn.welcome, sell=USDT, buy=NGNS, amount=10 * E18)
        await conn.send(request)
        seen: list[Levels] = []
        while not isinstance(message := await conn.receive(), MakerQuote):
            assert isinstance(message, Levels)
            seen.append(message)
        seen += [m for m in await conn.barrier() if isinstance(m, Levels)]
        gives = message.order.input_amount
        assert maker.commitments[request.quote_id].amount == gives
        assert [(m.sell_token.lower(), m.buy_token.lower()) for m in seen] == [(USDT, NGNS)]
        assert [(lv.sell_amount, lv.buy_amount) for lv in seen[0].levels] == maker.pricing.levels(
            SPEC[USDT], SPEC[NGNS], inventory - gives
        )
        await conn.send(Expired(quote_id=request.quote_id, rfq_id=request.rfq_id))
        await until(conn, lambda: not maker.commitments)
        back = [m for m in await conn.barrier() if isinstance(m, Levels)]
        assert [(m.sell_token.lower(), m.buy_token.lower()) for m in back] == [(USDT, NGNS)]
        assert [(lv.sell_amount, lv.buy_amount) for lv in back[-1].levels] == maker.pricing.levels(
            SPEC[USDT], SPEC[NGNS], inventory
        )
    finally:
        await maker.close()


async def test_levels_a_quote_does_not_change_are_not_republished(
    server: FakeStreamServer, chain: FakeChain
) -> None:
    # An underfunded maker shows a multiple of its balance whatever it has committed.
    maker, conn = await quiet_maker(server, chain, maker_config(behaviour="underfunded"))
    try:
        await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
        await conn.expect(MakerQuote)
        assert len(maker.commitments) == 1
        assert [m for m in await conn.barrier() if isinstance(m, Levels)] == []
    finally:
        await maker.close()
