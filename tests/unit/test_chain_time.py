"""AnvilChain.keep_up_with against a stand-in node that keeps time as Anvil does (whole-second
offset over its wall second, fixed when its time is set; blocks never before their parent): a
node that lags the service clock, by a start-up that straddled a second boundary, a fractional
clock offset or a revert, stamps no block after the call earlier than the service clock's whole
second before it. That is what a late fill's `filledAt >= expiresAt` rests on
(docs/decisions.md F25, TT1)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqkit.chain import AnvilChain

X = 1_790_000_000  # a wall second


@dataclass
class AnvilTime:
    """Anvil 1.7's TimeManager over a wall clock the test sets."""

    wall: float
    offset: int = 0
    last_timestamp: int = 0

    def set_time(self, timestamp: int) -> None:
        # Anvil's reset: start-up (the genesis second read earlier), evm_setTime, evm_revert.
        self.last_timestamp = timestamp
        self.offset = timestamp - math.floor(self.wall)

    def mine(self) -> int:
        stamp = math.floor(self.wall) + self.offset
        if stamp < self.last_timestamp:
            stamp = self.last_timestamp + 1
        self.last_timestamp = stamp
        return stamp


@dataclass
class Node:
    time: AnvilTime
    url: str


@pytest.fixture
async def node() -> AsyncIterator[Node]:
    time = AnvilTime(wall=X + 0.98)
    time.set_time(X)

    async def handle(request: web.Request) -> web.Response:
        call: dict[str, Any] = await request.json()
        method, params = call["method"], call["params"]
        result: Any
        if method == "evm_increaseTime":
            time.offset += int(params[0])
            result = time.offset  # Anvil answers the total offset, a JSON number
        elif method == "evm_mine":
            time.mine()
            result = "0x0"
        else:
            return web.json_response({"jsonrpc": "2.0", "id": call["id"], "error": {"code": -1}})
        return web.json_response({"jsonrpc": "2.0", "id": call["id"], "result": result})

    app = web.Application()
    app.router.add_post("/", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield Node(time, str(server.make_url("/")))
    await server.close()


def expire_then_mine(time: AnvilTime, clock_offset_s: float, at: float) -> tuple[int, int]:
    """The expire control's expiresAt (the service clock's whole second at wall `at`) and the
    stamp of a block mined 50 ms later, within the same wall second."""
    time.wall = at
    expires_at = math.floor(at + clock_offset_s)
    time.wall = at + 0.05
    return expires_at, time.mine()


async def test_a_node_whose_start_up_straddled_a_second_is_brought_up_to_the_clock(
    node: Node,
) -> None:
    # Genesis read at X.98, the offset fixed at X+1.01: the node runs a second behind.
    node.time.wall = X + 1.01
    node.time.set_time(X)
    assert node.time.offset == -1
    lagging = AnvilTime(node.time.wall, node.time.offset, node.time.last_timestamp)
    expires_at, stamp = expire_then_mine(lagging, 0.0, X + 2.3)
    assert stamp == expires_at - 1  # the flaky late fill: filledAt a second before expiresAt

    chain = AnvilChain(97, node.url)
    try:
        assert await chain.keep_up_with(0.0) == 1
    finally:
        await chain.close()
    for fraction in (0.0, 0.3, 0.94):
        expires_at, stamp = expire_then_mine(node.time, 0.0, X + 3 + fraction)
        assert stamp >= expires_at, (fraction, stamp, expires_at)


@pytest.mark.parametrize(
    ("clock_offset_s", "node_offset"),
    [
        (0.5, 0),  # a clock half a second ahead of a node in step with wall time
        (3600.0, 3599),  # an advance the node followed a second short
        (0.0, -300),  # a revert put the node's time back to a five-minute-old block
    ],
)
async def test_no_block_is_stamped_before_the_clock_second_once_kept_up(
    node: Node, clock_offset_s: float, node_offset: int
) -> None:
    node.time.offset = node_offset
    chain = AnvilChain(97, node.url)
    try:
        moved = await chain.keep_up_with(clock_offset_s)
        assert moved == math.ceil(clock_offset_s) - node_offset
        assert await chain.keep_up_with(clock_offset_s) == 0  # in step: nothing moves
    finally:
        await chain.close()
    for fraction in (0.0, 0.49, 0.51, 0.99):
        expires_at, stamp = expire_then_mine(node.time, clock_offset_s, X + 10 + fraction)
        assert stamp >= expires_at, (fraction, stamp, expires_at)
        # Never more than a second ahead: on-chain deadlines stay where the service puts them.
        assert stamp <= math.floor(X + 10 + fraction + 0.05 + clock_offset_s) + 1


async def test_a_node_ahead_of_the_clock_is_never_moved_back(node: Node) -> None:
    node.time.offset = 7
    chain = AnvilChain(97, node.url)
    try:
        assert await chain.keep_up_with(2.0) == 0
    finally:
        await chain.close()
    assert node.time.offset == 7
