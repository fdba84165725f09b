"""The ordered queue's own connection to the engine (adapters/redis/pipe.py), on a real
redis-server: replies in order, error replies as redis-py's exceptions, the URL's password and
database, and a lost connection replaced by the next batch."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis
import redis.asyncio as aredis

from simulator.adapters.redis.pipe import Command, EnginePipe
from simulator.adapters.redis.server import RedisNode, start_redis


async def replies_of(pipe: EnginePipe, commands: Sequence[Command]) -> list[Any]:
    """Each command's reply, in order (an error reply as its exception, not raised); a lost
    connection raises `redis.ConnectionError`."""
    answers = [asyncio.get_running_loop().create_future() for _ in commands]
    pipe.send(commands, [answer.set_result for answer in answers])
    replies = [await answer for answer in answers]
    for reply in replies:
        if isinstance(reply, redis.ConnectionError):
            raise reply
    return replies


async def test_a_batch_answers_in_order_with_errors_in_place(redis_node: RedisNode) -> None:
    pipe = EnginePipe(redis_node.url)
    try:
        replies = await replies_of(
            pipe,
            [
                ("SET", "pipe:bytes", b"\x00\xff{}", "PX", 60_000),
                ("GET", "pipe:bytes"),
                ("EVAL", "return {ARGV[1], tonumber(ARGV[2]) * 2, false}", 0, "é", 1.25),
                ("EVALSHA", "0" * 40, 0),
                ("INCRBYFLOAT", "pipe:float", 0.1),
                ("HGET", "pipe:bytes", "x"),  # the wrong kind of key
                ("GET", "pipe:missing"),
            ],
        )
    finally:
        pipe.close()
    assert replies[0] == "OK"
    assert replies[1] == "\x00\ufffd{}"  # text; a byte that is not UTF-8 read as U+FFFD
    assert replies[2] == ["é", 2, None]
    assert isinstance(replies[3], redis.exceptions.NoScriptError)
    assert replies[4] == "0.1"
    assert isinstance(replies[5], redis.exceptions.ResponseError)
    assert "WRONGTYPE" in str(replies[5])
    assert replies[6] is None


async def test_the_url_s_password_and_database_are_used() -> None:
    node = start_redis()
    try:
        admin = redis.Redis.from_url(node.url)
        admin.config_set("requirepass", "s3cret")
        admin.close()
        path = node.url.removeprefix("unix://")
        refused = EnginePipe(node.url)
        try:
            (reply,) = await replies_of(refused, [("PING",)])
            assert isinstance(reply, redis.exceptions.ResponseError)  # NOAUTH
        finally:
            refused.close()
        pipe = EnginePipe(f"unix://:s3cret@{path}?db=3")
        try:
            assert await replies_of(pipe, [("SET", "pipe:db", "three")]) == ["OK"]
        finally:
            pipe.close()
        reader = aredis.Redis.from_url(f"unix://:s3cret@{path}?db=3", decode_responses=True)
        assert await reader.get("pipe:db") == "three"
        await reader.aclose()
    finally:
        node.stop()


async def test_a_lost_connection_fails_its_batch_and_the_next_reconnects(
    redis_node: RedisNode,
) -> None:
    pipe = EnginePipe(redis_node.url)
    admin = redis.Redis.from_url(redis_node.url, decode_responses=True)
    try:
        assert await replies_of(pipe, [("CLIENT", "SETNAME", "pipe-under-test")]) == ["OK"]
        (ours,) = [c for c in admin.client_list() if c["name"] == "pipe-under-test"]
        # Dropped by the engine through the blocking client: the loop does not run meanwhile,
        # so the pipe has not seen the end yet and the batch goes on the dropped connection
        # (an end it has seen makes the next batch open a new one at once).
        assert admin.client_kill_filter(_id=ours["id"]) == 1
        try:
            await replies_of(pipe, [("PING",)])
        except redis.ConnectionError:
            pass
        else:
            raise AssertionError("a batch on a killed connection answered")
        assert await replies_of(pipe, [("PING",)]) == ["PONG"]  # a new connection
    finally:
        pipe.close()
        admin.close()
