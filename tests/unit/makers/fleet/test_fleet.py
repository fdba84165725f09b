"""Reconfiguring makers while they run and running several as a MakerFleet: a live change of
behaviour, spread and online state (the wallet cannot change), a fleet that starts, reconfigures
and closes its makers but not the caller's chain access, one credential needed per maker, and a
maker whose key was revoked while offline staying offline."""

from __future__ import annotations

import asyncio

import pytest

from makers.client import MakerAuthError
from makers.config import FleetConfig
from makers.fleet import MakerFleet
from rfqkit.maker_protocol import Decline, MakerQuote
from tests.unit.makers.fake_stream import FakeStreamServer, rfq
from tests.unit.makers.fleet.fakes import E18, FAST, NGNS, USDT, FakeChain, StartMaker, maker_config


async def test_reconfigure_live_behaviour_and_online(
    server: FakeStreamServer, start_maker: StartMaker
) -> None:
    maker, conn = await start_maker()
    await maker.reconfigure(behaviour="decline", spread_bps=50)
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    assert (await conn.expect(Decline)).reason == "liquidity"
    assert maker.pricing.params.spread_bps == 50
    await maker.reconfigure(online=False)
    await asyncio.wait_for(conn.closed.wait(), 10)
    assert not maker.connected
    await maker.reconfigure(online=True, behaviour="normal")
    again = await server.next_connection()
    assert maker.connected
    await again.send(rfq(again.welcome, sell=USDT, buy=NGNS, amount=E18, quote_id="mq_2"))
    assert (await again.expect(MakerQuote)).quote_id == "mq_2"
    with pytest.raises(ValueError, match="cannot change"):
        await maker.reconfigure(wallet_index=2)
    assert maker.status()["behaviour"] == "normal"


async def test_fleet_runs_makers_reconfigures_and_closes(
    server: FakeStreamServer, chain: FakeChain
) -> None:
    config = FleetConfig(makers=(maker_config("a", 0), maker_config("b", 1, online=False)), seed=5)
    fleet = MakerFleet(
        config,
        url=server.url,
        credentials={"a": ["tx_live_maker0"], "b": ["tx_live_maker1"]},
        rpc_urls={},
        chains={56: chain},
        backoff=FAST,
    )
    async with fleet:
        status = {s["name"]: s for s in fleet.status()}
        assert status["a"]["connected"]
        assert status["a"]["chains"] == [56]
        assert not status["b"]["connected"]
        assert len(server.connections) == 1
        await fleet.reconfigure("b", online=True)
        assert fleet.maker("b").connected
        assert len(server.connections) == 2
        with pytest.raises(KeyError, match="no maker named"):
            fleet.maker("zulu")
    assert all(c.closed.is_set() for c in server.connections)
    assert not chain.closed  # the caller's chain access is the caller's to close


async def test_fleet_needs_a_credential_per_maker(server: FakeStreamServer) -> None:
    with pytest.raises(ValueError, match="no maker credential for b"):
        MakerFleet(
            FleetConfig(makers=(maker_config("a", 0), maker_config("b", 1))),
            url=server.url,
            credentials={"a": ["k"]},
            rpc_urls={},
        )


async def test_going_online_with_a_refused_key_stays_offline(
    server: FakeStreamServer, start_maker: StartMaker
) -> None:
    maker, _ = await start_maker()
    await maker.reconfigure(online=False)
    del server.keys["tx_live_maker0"]  # revoked meanwhile
    with pytest.raises(MakerAuthError):
        await maker.reconfigure(online=True)
    assert not maker.config.online
    assert not maker.connected
