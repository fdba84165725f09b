"""The synchronous face of the one JSON-RPC client (rfqkit/json_rpc.py), against a node played
by a loopback aiohttp server: the result of a call, the node's error object, an answer that is
not JSON, and a node that is not there, each told apart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from rfqkit.json_rpc import RpcError, hex_to_int, rpc


async def node(request: web.Request) -> web.Response:
    call = await request.json()
    assert (call["jsonrpc"], call["id"]) == ("2.0", 1)
    if call["method"] == "eth_chainId":
        return web.json_response({"jsonrpc": "2.0", "id": 1, "result": "0x61"})
    if call["method"] == "broken":
        return web.Response(text="<html>")
    error = {"code": -32601, "message": f"method {call['method']} not found"}
    return web.json_response({"jsonrpc": "2.0", "id": 1, "error": error})


@pytest.fixture
async def url() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/", node)
    async with TestServer(app, host="127.0.0.1") as server:
        yield str(server.make_url("/"))


async def call(url: str, method: str, params: list[Any] | None = None) -> Any:
    return await asyncio.to_thread(rpc, url, method, params, timeout=5)


async def test_a_call_returns_its_result(url: str) -> None:
    assert hex_to_int(await call(url, "eth_chainId")) == 97


async def test_an_error_object_is_an_rpc_error_with_the_nodes_words(url: str) -> None:
    with pytest.raises(RpcError) as failed:
        await call(url, "eth_nothing", [1])
    assert failed.value.reachable
    assert failed.value.message == "method eth_nothing not found"
    assert failed.value.error == {"code": -32601, "message": "method eth_nothing not found"}


async def test_an_answer_that_is_not_json_and_a_missing_node_are_unreachable(url: str) -> None:
    with pytest.raises(RpcError) as garbled:
        await call(url, "broken")
    assert not garbled.value.reachable
    assert "not JSON" in garbled.value.message
    with pytest.raises(RpcError) as absent:
        await asyncio.to_thread(rpc, "http://127.0.0.1:9/", "eth_chainId", timeout=5)
    assert not absent.value.reachable
    assert absent.value.message.startswith("http://127.0.0.1:9/ unreachable")


def test_a_quantity_must_be_hex() -> None:
    assert hex_to_int("0x0") == 0
    with pytest.raises(ValueError, match="not a hex quantity"):
        hex_to_int("97")
