"""The connection of an instance's ordered queue to the engine (engine.py `OrderedWrites`):
commands are written the moment they are sent, behind everything sent before (the engine runs
one connection's commands in order), and each reply is parsed by hiredis and handed to its
command's callback in the same event-loop turn it arrives: no task sits between the socket and
the request that waits, so a round trip costs the request one loop turn, not three.
Every check and write of the firm path goes through it; redis-py's pipeline spent about three
times the CPU per batch (224 against 71 µs for four scripts, measured 2026-11-30: its connection
pool, retry wrapper, and one parse call and timeout per reply), on the event loop that answers
the requests. The rest of the instance's calls (the control client, subscriptions, the roster)
stay on redis-py.

Replies are text (UTF-8; an invalid byte read as U+FFFD, never an error that would stop the
queue). An error reply is handed over as redis-py's exception (`NoScriptError` for a script
the engine no longer knows, else `ResponseError`); an engine that cannot be reached, or a
connection that ends, hands every command still waiting `redis.ConnectionError`, and the next
send opens a new connection."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import hiredis
import redis
from redis.asyncio.connection import SSLConnection, parse_url

log = logging.getLogger("rfqsim.engine")

Command = Sequence[str | int | float | bytes]
Reply = Callable[[Any], None]  # given the reply: a value, or an error as its exception


def _encoded(value: str | int | float | bytes) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, float):
        return repr(value).encode()  # as redis-py sends a float
    return str(value).encode()


def packed(commands: Sequence[Command]) -> bytes:
    """The commands in the engine's wire protocol (RESP arrays of bulk strings)."""
    parts: list[bytes] = []
    for command in commands:
        parts.append(b"*%d\r\n" % len(command))
        for value in command:
            data = _encoded(value)
            parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(parts)


def _as_redis_error(reply: Any) -> Any:
    if isinstance(reply, hiredis.ReplyError):
        message = str(reply)
        if message.startswith("NOSCRIPT"):
            return redis.exceptions.NoScriptError(message)
        return redis.exceptions.ResponseError(message)
    return reply


def _tls(options: dict[str, Any]) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if str(options.get("ssl_cert_reqs", "required")).lower() in ("none", "cert_none"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


class _Connection(asyncio.Protocol):
    """One connection's events, handed to the pipe that made it (a late event of a connection
    the pipe has already replaced is ignored there)."""

    def __init__(self, pipe: EnginePipe) -> None:
        self.pipe = pipe
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.pipe.received(self, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipe.lost(self, exc)


class EnginePipe:
    def __init__(self, url: str) -> None:
        self._options: dict[str, Any] = dict(parse_url(url))
        self._connection: _Connection | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._unsent: list[bytes] = []  # sent while the connection is being made
        self._waiting: deque[Reply] = deque()  # one per command written or unsent, in order
        self._parser = hiredis.Reader(encoding="utf-8", errors="replace")

    def send(self, commands: Sequence[Command], replies: Sequence[Reply]) -> bool:
        """Write `commands` now (or once connected), after everything sent before; each
        command's reply goes to its callback, in order, as soon as it is read. True when they
        are in the kernel's hands now (the socket took them whole: they reach the engine even
        if this process dies next)."""
        data = packed(commands)
        self._waiting.extend(replies)
        connection = self._connection
        if connection is not None and connection.transport is not None:
            connection.transport.write(data)
            return connection.transport.get_write_buffer_size() == 0
        self._unsent.append(data)
        if self._connecting is None:
            self._connecting = asyncio.get_running_loop().create_task(
                self._connect(), name="engine-connect"
            )
        return False

    def received(self, connection: _Connection, data: bytes) -> None:
        if connection is not self._connection:
            return
        parser = self._parser
        try:
            parser.feed(data)
            while connection is self._connection:  # a reply's callback may end it
                reply = parser.gets()
                if reply is False:
                    break
                self._waiting.popleft()(_as_redis_error(reply))
        except (hiredis.ProtocolError, IndexError) as exc:  # not the engine's protocol
            self._end(redis.ConnectionError(f"the engine's connection failed: {exc!r}"))

    def lost(self, connection: _Connection, exc: Exception | None) -> None:
        if connection is self._connection:
            self._end(redis.ConnectionError(f"the engine closed the connection ({exc})"))

    async def _connect(self) -> None:
        options = self._options
        loop = asyncio.get_running_loop()
        try:
            if "path" in options:
                _, connection = await loop.create_unix_connection(
                    lambda: _Connection(self), options["path"]
                )
            else:
                tls = _tls(options) if options.get("connection_class") is SSLConnection else None
                _, connection = await loop.create_connection(
                    lambda: _Connection(self),
                    options.get("host", "localhost"),
                    options.get("port", 6379),
                    ssl=tls,
                )
        except Exception as exc:  # OSError, TLS, a bad address: not reachable as given
            self._connecting = None
            self._end(redis.ConnectionError(f"the engine cannot be reached: {exc}"))
            return
        self._connecting = None
        hello: list[Command] = []
        if options.get("password") is not None:
            user = options.get("username")
            hello.append(
                ("AUTH", user, options["password"]) if user else ("AUTH", options["password"])
            )
        if options.get("db"):
            hello.append(("SELECT", int(options["db"])))
        self._parser = hiredis.Reader(encoding="utf-8", errors="replace")
        self._waiting.extendleft([self._greeted] * len(hello))
        self._connection = connection
        assert connection.transport is not None
        connection.transport.write(packed(hello) + b"".join(self._unsent))
        self._unsent.clear()

    def _greeted(self, reply: Any) -> None:
        if isinstance(reply, redis.RedisError):  # refused: what was sent behind it fails too
            self._end(reply)

    def _end(self, error: redis.RedisError) -> None:
        """Close the connection; every command still waiting gets `error`."""
        connection, self._connection = self._connection, None
        if connection is not None and connection.transport is not None:
            connection.transport.close()
        self._unsent.clear()
        waiting, self._waiting = self._waiting, deque()
        for reply in waiting:
            try:
                reply(error)
            except Exception:  # one callback's bug must not leave the others waiting
                log.exception("shared engine: a reply's callback failed")

    def close(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
            self._connecting = None
        self._end(redis.ConnectionError("the connection to the engine was closed"))
