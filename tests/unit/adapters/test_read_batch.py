"""The quote path's coalesced chain reads (simulator/adapters/rfq/read_batch.py) against a
stand-in JSON-RPC node served over loopback HTTP: calls asked for in one event-loop turn share
one batch, each caller gets its own answer, and one call's revert is that caller's alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqkit.chain import AnvilChain, CallReverted, ChainUnavailable
from simulator.adapters.rfq.read_batch import ReadBatcher

REVERTS = "0xdead"


class Node:
    def __init__(self) -> None:
        self.posts: list[list[dict[str, Any]]] = []  # every JSON-RPC batch received

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.posts.append(body)
        answers = []
        for call in body:
            data = call["params"][0]["data"]
            if data == REVERTS:
                answers.append(
                    {"jsonrpc": "2.0", "id": call["id"], "error": {"message": "execution reverted"}}
                )
            else:  # echo the calldata back, as 32 bytes
                answers.append(
                    {"jsonrpc": "2.0", "id": call["id"], "result": "0x" + data[2:].rjust(64, "0")}
                )
        return web.json_response(answers)


@pytest.fixture
async def node() -> AsyncIterator[tuple[Node, AnvilChain]]:
    fake = Node()
    app = web.Application()
    app.router.add_post("/", fake.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    chain = AnvilChain(97, str(server.make_url("/")))
    yield fake, chain
    await chain.close()
    await server.close()


async def test_reads_of_one_turn_share_one_batch_and_keep_their_own_answers(
    node: tuple[Node, AnvilChain],
) -> None:
    fake, chain = node
    batcher = ReadBatcher(chain)
    one, two = await asyncio.gather(
        batcher.call("0x" + "11" * 20, b"\x01"),
        batcher.calls([("0x" + "22" * 20, b"\x02"), ("0x" + "33" * 20, b"\x03")]),
    )
    assert one == (1).to_bytes(32, "big")
    assert two == [(2).to_bytes(32, "big"), (3).to_bytes(32, "big")]
    assert [len(batch) for batch in fake.posts] == [3]
    # A read asked for later is not held back: it goes in its own round trip.
    assert await batcher.call(None, b"\x04") == (4).to_bytes(32, "big")
    assert [len(batch) for batch in fake.posts] == [3, 1]


async def test_a_revert_fails_only_its_own_caller(node: tuple[Node, AnvilChain]) -> None:
    fake, chain = node
    batcher = ReadBatcher(chain)
    ok, reverted = await asyncio.gather(
        batcher.call(None, b"\x05"),
        batcher.call(None, bytes.fromhex(REVERTS[2:])),
        return_exceptions=True,
    )
    assert ok == (5).to_bytes(32, "big")
    assert isinstance(reverted, CallReverted)
    assert len(fake.posts) == 1


async def test_an_unreachable_chain_fails_every_caller_of_the_batch(
    node: tuple[Node, AnvilChain],
) -> None:
    fake, chain = node
    cut = AnvilChain(97, chain.rpc_url, is_unreachable=lambda: True)
    batcher = ReadBatcher(cut)
    results = await asyncio.gather(
        batcher.call(None, b"\x06"), batcher.call(None, b"\x07"), return_exceptions=True
    )
    assert all(isinstance(r, ChainUnavailable) for r in results)
    assert fake.posts == []
