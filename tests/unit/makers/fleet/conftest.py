"""Fixtures of the SimulatedMaker and MakerFleet tests: ``chain``, a FakeChain funding the three
maker wallets; ``server``, the in-test stream server welcoming their keys with a 60 ms reply
budget; ``start_maker``, which starts a SimulatedMaker against both and closes it afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from makers.config import MakerConfig
from makers.fleet import SimulatedMaker
from tests.unit.makers.fake_stream import FakeConnection, FakeStreamServer, welcome
from tests.unit.makers.fleet.fakes import (
    E6,
    E18,
    FAST,
    KEYS,
    WALLETS,
    FakeChain,
    StartMaker,
    maker_config,
)


@pytest.fixture
def chain() -> FakeChain:
    fake = FakeChain()
    for wallet in WALLETS:
        fake.fund(wallet.address, usdt=1_000 * E18, ngns=1_000_000 * E6)
    return fake


@pytest.fixture
async def server() -> AsyncIterator[FakeStreamServer]:
    fake = FakeStreamServer(
        lambda key, wallet: welcome(wallet, reply_budget_ms=60), keys=dict(KEYS)
    )  # a copy: a test may revoke a key
    await fake.start()
    try:
        yield fake
    finally:
        await fake.close()


@pytest.fixture
async def start_maker(server: FakeStreamServer, chain: FakeChain) -> AsyncIterator[StartMaker]:
    makers: list[SimulatedMaker] = []

    async def start(config: MakerConfig | None = None) -> tuple[SimulatedMaker, FakeConnection]:
        config = config or maker_config()
        assert config.wallet_index is not None
        maker = SimulatedMaker(
            config,
            url=server.url,
            api_keys=[f"tx_live_maker{config.wallet_index}"],
            chains={56: chain},
            backoff=FAST,
        )
        makers.append(maker)
        await maker.start(wait_s=10)
        return maker, await server.next_connection()

    try:
        yield start
    finally:
        for maker in makers:
            await maker.close()
