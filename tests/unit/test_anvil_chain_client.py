"""rfqkit.chain.AnvilChain against a stand-in JSON-RPC node over loopback HTTP: the /_sim/faults
chain switch cuts the service's calls but not the simulator's own handling of its node, and a
call made while the client's session closes opens a new one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqkit.chain import AnvilChain, ChainUnavailable


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async def handle(request: web.Request) -> web.Response:
        call: dict[str, Any] = await request.json()
        return web.json_response({"jsonrpc": "2.0", "id": call["id"], "result": call["method"]})

    app = web.Application()
    app.router.add_post("/", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("/"))
    await server.close()


async def test_the_fault_switch_cuts_rpc_but_not_control_rpc(url: str) -> None:
    cut = True
    chain = AnvilChain(97, url, is_unreachable=lambda: cut)
    try:
        with pytest.raises(ChainUnavailable, match="fault switch"):
            await chain.rpc("eth_blockNumber")
        assert await chain.control_rpc("anvil_dumpState") == "anvil_dumpState"
        cut = False
        assert await chain.rpc("eth_blockNumber") == "eth_blockNumber"
    finally:
        await chain.close()


async def test_a_call_during_a_reset_uses_a_new_session(url: str) -> None:
    chain = AnvilChain(97, url)
    try:
        await chain.rpc("eth_chainId")  # opens the first session
        answers = await asyncio.gather(chain.reset(), chain.rpc("eth_blockNumber"))
        assert answers[1] == "eth_blockNumber"
    finally:
        await chain.close()
