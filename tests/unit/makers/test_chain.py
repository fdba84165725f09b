"""The makers' chain access against an in-test JSON-RPC node: reads decode, an approval is signed
locally and waited for, and cancelled calls never wedge the calls after them nor leave a thread
behind (web3's async provider took a threading.Lock through run_in_executor: one burst of
cancelled calls left every later call, and the interpreter's exit, waiting forever)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import rlp  # type: ignore[import-untyped]
from aiohttp import web
from aiohttp.test_utils import TestServer
from eth_abi.abi import decode, encode
from eth_account import Account

from makers.chain import ALLOWANCE, APPROVE, BALANCE_OF, SYMBOL, MakerChain, connect

TOKEN = "0x" + "22" * 20
OWNER = "0x" + "33" * 20
SPENDER = "0x" + "44" * 20
KEY = "0x" + "55" * 32


class FakeNode:
    """Answers eth_call for one ERC-20 and records raw transactions; every answer yields to the
    loop first, so concurrent calls are really in flight together."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.allowance = 7

    def _eth_call(self, data: bytes) -> bytes:
        if data[:4] == SYMBOL:
            return encode(["string"], ["USDT"])
        if data[:4] == BALANCE_OF:
            return encode(["uint256"], [10**21])
        if data[:4] == ALLOWANCE:
            return encode(["uint256"], [self.allowance])
        raise AssertionError(f"unexpected call {data.hex()}")

    def answer(self, request: dict[str, Any]) -> Any:
        method, params = request["method"], request["params"]
        if method == "eth_call":
            return "0x" + self._eth_call(bytes.fromhex(params[0]["data"][2:])).hex()
        if method == "eth_chainId":
            return "0x61"
        if method == "eth_getTransactionCount":
            return "0x3"
        if method == "eth_gasPrice":
            return hex(10**9)
        if method == "eth_sendRawTransaction":
            self.sent.append(params[0])
            return "0x" + "ab" * 32
        if method == "eth_getTransactionReceipt":
            return {"status": "0x1"}
        if method == "eth_blockNumber":
            return "0x1"
        raise AssertionError(f"unexpected method {method}")

    async def handle(self, request: web.Request) -> web.Response:
        payload = await request.json()
        await asyncio.sleep(0.001)
        if isinstance(payload, list):
            return web.json_response(
                [{"jsonrpc": "2.0", "id": p["id"], "result": self.answer(p)} for p in payload]
            )
        return web.json_response(
            {"jsonrpc": "2.0", "id": payload["id"], "result": self.answer(payload)}
        )


@pytest.fixture
async def node() -> AsyncIterator[tuple[FakeNode, MakerChain]]:
    fake = FakeNode()
    app = web.Application()
    app.router.add_post("/", fake.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    chain = connect(97, str(server.make_url("/")))
    try:
        yield fake, chain
    finally:
        await chain.close()
        await server.close()


async def test_reads_decode_the_token_answers(node: tuple[FakeNode, MakerChain]) -> None:
    _, chain = node
    assert await chain.token_symbol(TOKEN) == "USDT"
    assert await chain.balance_of(TOKEN, OWNER) == 10**21
    assert await chain.allowance(TOKEN, OWNER, SPENDER) == 7


async def test_approve_signs_locally_with_the_pending_nonce(
    node: tuple[FakeNode, MakerChain],
) -> None:
    fake, chain = node
    tx_hash = await chain.approve(KEY, TOKEN, SPENDER, 5)
    assert tx_hash == "0x" + "ab" * 32
    raw = bytes.fromhex(fake.sent[0][2:])
    # A legacy transaction: rlp([nonce, gasPrice, gas, to, value, data, v, r, s]).
    nonce, gas_price, gas, to, value, data, *_ = rlp.decode(raw)
    assert int.from_bytes(nonce, "big") == 3
    assert int.from_bytes(gas_price, "big") == 10**9
    assert to.hex() == TOKEN[2:]
    assert data[:4] == APPROVE
    assert decode(["address", "uint256"], data[4:]) == (SPENDER, 5)
    assert Account.recover_transaction(raw) == Account.from_key(KEY).address
    assert int.from_bytes(value, "big") == 0
    assert int.from_bytes(gas, "big") > 0


async def test_cancelled_calls_never_wedge_later_calls_nor_leave_threads(
    node: tuple[FakeNode, MakerChain],
) -> None:
    _, chain = node
    await chain.balance_of(TOKEN, OWNER)  # warm: the session exists
    threads_before = set(threading.enumerate())
    for _ in range(20):
        burst = [asyncio.create_task(chain.balance_of(TOKEN, OWNER)) for _ in range(64)]
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        for task in burst:
            task.cancel()
        await asyncio.gather(*burst, return_exceptions=True)
        # web3 wedged here on the first round: every later call waited on the stranded lock.
        assert await asyncio.wait_for(chain.balance_of(TOKEN, OWNER), 5) == 10**21
    stray = [t.name for t in set(threading.enumerate()) - threads_before if t.is_alive()]
    assert stray == [], f"chain calls started threads: {stray}"
