"""AnvilChain.keep_up_with on a real Anvil whose time lags wall time (started with a genesis
second in the past, as a start-up that straddled a second boundary or a revert leaves it): once
brought up to the service clock, a block mined afterwards is stamped no earlier than the
clock's whole second before it (docs/decisions.md F25)."""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator

import pytest

from rfqkit.anvil import start_anvil
from rfqkit.chain import AnvilChain

pytestmark = pytest.mark.integration

CHAIN_ID = 31337
LAG_S = 5


@pytest.fixture
async def lagging() -> AsyncIterator[AnvilChain]:
    node = start_anvil(CHAIN_ID, port=0, timestamp=int(time.time()) - LAG_S)
    chain = AnvilChain(CHAIN_ID, node.rpc_url)
    try:
        yield chain
    finally:
        await chain.close()
        node.stop()


async def mined_stamp(chain: AnvilChain) -> int:
    await chain.rpc("evm_mine", [])
    return await chain.latest_timestamp()


@pytest.mark.parametrize("clock_offset_s", [0.0, 3600.0])
async def test_a_lagging_node_is_brought_up_to_the_service_clock(
    lagging: AnvilChain, clock_offset_s: float
) -> None:
    before = math.floor(time.time() + clock_offset_s)
    assert await mined_stamp(lagging) < before  # it lags as set up
    moved = await lagging.keep_up_with(clock_offset_s)
    assert moved >= LAG_S + clock_offset_s
    for _ in range(3):
        before = math.floor(time.time() + clock_offset_s)
        stamp = await mined_stamp(lagging)
        assert before <= stamp <= math.floor(time.time() + clock_offset_s) + 1
    assert await lagging.keep_up_with(clock_offset_s) == 0  # in step: nothing moves
