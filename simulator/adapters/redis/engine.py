"""The connections to the shared engine (Redis or Valkey) and the two ways its stores use it.

- Everything an instance sends on the request path goes through its one `OrderedWrites` queue:
  checks (a check-and-take is one Lua script, atomic on the server whichever instance sends
  it; awaited) and writes a caller does not wait for (a slot extended or released), in the
  order given, on one connection: a check is written at once behind the writes queued before
  it, never waiting for an earlier answer, so a check never reads past its own instance's
  writes and under load many requests' checks are on the wire together.
- Reset, snapshots and the state directory are synchronous by design (services/shared/state.py):
  they use the blocking `control` client, once per control request, never on the quote path.

An engine that does not answer is the venue's 503 (`VenueUnavailable`), never a 500."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic

import redis
import redis.asyncio as aredis
from redis.commands.core import AsyncScript, Script

from rfqkit.tasks import cancel_and_wait
from simulator.adapters.redis.pipe import EnginePipe
from simulator.errors import VenueUnavailable
from simulator.services.shared.state import SchemaT, read_schema

log = logging.getLogger("rfqsim.engine")

Arg = str | int | float | bytes


# What says the engine is not there (a script's error is a bug, answered 500 like any other).
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError)


def unreachable(exc: redis.RedisError) -> VenueUnavailable:
    """What a request gets while the shared engine does not answer."""
    return VenueUnavailable(f"Quotes are briefly not served; retry ({type(exc).__name__})")


async def follow_forever(subscription: Callable[[], Awaitable[None]], what: str) -> None:
    """Run `subscription` (it reads a channel until the connection ends) until cancelled; while
    the engine is unreachable, start it again every second."""
    while True:
        try:
            await subscription()
        except UNREACHABLE as exc:
            log.warning("shared engine: %s is not followed (%s); retrying", what, exc)
            await asyncio.sleep(1)


@dataclass(frozen=True)
class EngineScript:
    """One Lua script, for the asyncio client (requests) and the blocking one (control)."""

    request: AsyncScript
    control: Script

    def run_now(self, args: Sequence[Arg]) -> object:
        return self.control(keys=[], args=list(args))


def _retrieve(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled():
        answer.exception()  # retrieved: a future nobody awaited logs no "never retrieved"


def _settle(sent: asyncio.Future[None] | None, error: BaseException | None) -> None:
    if sent is not None and not sent.done():
        if error is None:
            sent.set_result(None)
        else:
            sent.set_exception(error)


@dataclass(frozen=True)
class _Queued:
    script: EngineScript
    args: Sequence[Arg]
    answer: asyncio.Future[Any] | None  # None: a write nobody awaits
    retried: bool = False  # sent again once the engine had lost the script
    sent: asyncio.Future[None] | None = None  # `send`: done once it is on the connection


class OrderedWrites:
    """Scripts sent to the engine in the order given, on the instance's one connection (the
    engine runs them in that order): a check (`then`, `submit`) is written at once with every
    write queued before it; writes (`put`, not awaited) wait for the end of the event-loop turn,
    so the writes of one turn go in one write to the socket. Nothing waits for an earlier
    answer before sending: under load the checks of many requests are on the wire together,
    and each request resumes in the loop turn its answer is read."""

    def __init__(self, client: aredis.Redis, pipe: EnginePipe) -> None:
        self._client = client
        self._pipe = pipe  # the queue's own connection (pipe.py)
        self._pending: list[_Queued] = []  # queued, not yet written
        self._flush_soon: asyncio.Handle | None = None
        self._unanswered = 0  # written, or being loaded again, with no answer yet
        self._idle = asyncio.Event()  # nothing queued nor unanswered
        self._idle.set()
        self._loading: dict[str, asyncio.Task[None]] = {}  # scripts being loaded again, by digest
        self._failed: list[Exception] = []  # writes not applied this turn (logged once)

    def put(self, script: EngineScript, args: Sequence[Arg]) -> None:
        self._queue(_Queued(script, args, None))
        if self._flush_soon is None:
            self._flush_soon = asyncio.get_running_loop().call_soon(self._flush)

    def send(self, script: EngineScript, args: Sequence[Arg]) -> asyncio.Future[None]:
        """A write its caller waits for only until it is on the engine's connection (in the
        kernel's hands: delivered even if this process dies next), not for its answer, which
        is a write's (an error logged). Written at once with everything queued before it;
        fails if it cannot be written (engine unreachable)."""
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        sent.add_done_callback(_retrieve)
        self._queue(_Queued(script, args, None, sent=sent))
        self._flush()
        return sent

    async def then(self, script: EngineScript, args: Sequence[Arg]) -> Any:
        """Run `script` after every write queued so far; its answer, or its error (a write's
        error is logged)."""
        return await self.submit(script, args)

    def submit(self, script: EngineScript, args: Sequence[Arg]) -> asyncio.Future[Any]:
        """`then` without waiting now: the future of its answer (an error nobody awaits is
        dropped, as a write's is logged)."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        answer.add_done_callback(_retrieve)
        self._queue(_Queued(script, args, answer))
        self._flush()
        return answer

    def _queue(self, queued: _Queued) -> None:
        self._pending.append(queued)
        self._idle.clear()

    def _flush(self) -> None:
        if self._flush_soon is not None:
            self._flush_soon.cancel()
            self._flush_soon = None
        batch, self._pending = self._pending, []
        if batch:
            self._send(batch)

    def _send(self, batch: Sequence[_Queued]) -> None:
        self._unanswered += len(batch)
        written = self._pipe.send(
            [("EVALSHA", queued.script.request.sha, 0, *queued.args) for queued in batch],
            [partial(self._answered, queued) for queued in batch],
        )
        if written:  # else once answered (or failed)
            for queued in batch:
                _settle(queued.sent, None)

    def _answered(self, queued: _Queued, reply: Any) -> None:
        if isinstance(reply, redis.exceptions.NoScriptError) and not queued.retried:
            # The engine restarted and lost the script: load it and send this one again (each
            # write only acts on what still exists, so its lateness is harmless).
            self._load_again(queued)
            return
        self._unanswered -= 1
        _settle(queued.sent, reply if isinstance(reply, redis.ConnectionError) else None)
        waiting = queued.answer
        if waiting is None:
            if isinstance(reply, Exception):
                if not self._failed:
                    asyncio.get_running_loop().call_soon(self._log_failed)
                self._failed.append(reply)
        elif waiting.done():
            pass  # its request was cancelled meanwhile
        elif isinstance(reply, Exception):
            waiting.set_exception(reply)
        else:
            waiting.set_result(reply)
        if not self._unanswered and not self._pending:
            self._idle.set()

    def _load_again(self, queued: _Queued) -> None:
        again = _Queued(queued.script, queued.args, queued.answer, True, queued.sent)
        sha = queued.script.request.sha
        loading = self._loading.get(sha)
        if loading is None:
            loading = self._loading[sha] = asyncio.get_running_loop().create_task(
                self._load(queued.script), name="engine-script-load"
            )
        loading.add_done_callback(lambda done: self._loaded(again, done))

    async def _load(self, script: EngineScript) -> None:
        try:
            await self._client.script_load(script.request.script)
        finally:
            self._loading.pop(script.request.sha, None)

    def _loaded(self, again: _Queued, loading: asyncio.Task[None]) -> None:
        if loading.cancelled():
            self._answered(again, redis.ConnectionError("the instance is stopping"))
        elif (error := loading.exception()) is not None:
            self._answered(again, error)
        else:
            self._unanswered -= 1  # counted again as it is sent
            self._send([again])

    def _log_failed(self) -> None:
        failed, self._failed = self._failed, []
        if failed:
            # What was lost lapses by itself (every entry has its end); say so once.
            log.warning("shared engine: %d writes not applied: %s", len(failed), failed[0])

    async def drained(self) -> None:
        """Every script queued so far has reached the engine (or failed and was logged)."""
        await self._idle.wait()

    def apply_now(self) -> None:
        """Send what is still queued through the blocking client (before a state dump or
        load). A script already written on the queue's connection may land after it."""
        if self._flush_soon is not None:
            self._flush_soon.cancel()
            self._flush_soon = None
        pending, self._pending = self._pending, []
        for queued in pending:
            result = queued.script.run_now(queued.args)
            if queued.answer is not None and not queued.answer.done():
                queued.answer.set_result(result)
            _settle(queued.sent, None)
        if not self._unanswered:
            self._idle.set()

    async def aclose(self) -> None:
        self._flush()
        try:
            async with asyncio.timeout(2):
                await self.drained()
        except TimeoutError:
            log.warning("shared engine: %d writes left unanswered on stop", self._unanswered)
        await cancel_and_wait(list(self._loading.values()))
        self._pipe.close()  # whatever is still unanswered fails with ConnectionError
        self._log_failed()


class EngineState(Generic[SchemaT]):
    """A store on the engine as a state participant: its whole content read (`read`) and
    replaced (`write`) through the schema of its in-memory twin, so a snapshot or a state
    directory moves between one instance and several. Checked whole before anything is
    replaced (services/shared/state.py)."""

    def __init__(
        self,
        name: str,
        schema: type[SchemaT],
        read: Callable[[], SchemaT],
        write: Callable[[SchemaT], None],
    ) -> None:
        self.name = name
        self._schema = schema
        self._read = read
        self._write = write

    def dump(self) -> dict[str, Any]:
        return self._read().model_dump(mode="json")

    def check(self, state: object) -> SchemaT:
        return read_schema(self.name, self._schema, state)

    def load(self, state: dict[str, Any]) -> None:
        self._write(self.check(state))


class EngineUnreachable(RuntimeError):
    """The shared engine did not answer when the instance started: says where and why."""


class SharedEngine:
    """The connections of one instance to the shared engine at `url` (redis://host:port/db,
    rediss://…, or unix:///path/to/socket), every key under `prefix`. The engine must answer
    when it is made (else EngineUnreachable)."""

    def __init__(self, url: str, *, prefix: str = "rfqsim:") -> None:
        self.url = url
        self.prefix = prefix
        self.client = aredis.Redis.from_url(url, decode_responses=True)
        self.control = redis.Redis.from_url(url, decode_responses=True)
        self._writes: list[OrderedWrites] = []
        try:
            self.control.ping()
        except (*UNREACHABLE, ValueError) as exc:
            self.control.close()
            raise EngineUnreachable(
                f"the shared engine at {url} does not answer ({exc}): start it, or check "
                "--redis-url"
            ) from exc

    def join(self) -> int:
        """This instance's number among those that ever joined the venue on this engine: 0 for
        the first, then 1, 2, … (a restarted instance takes a new one)."""
        return int(self.control.incr(self.prefix + "instances")) - 1

    def shared_secret(self, name: str) -> str:
        """A secret every instance of the venue reads alike: made by the first to ask."""
        key = self.prefix + name
        self.control.set(key, secrets.token_hex(16), nx=True)
        return str(self.control.get(key))

    def script(self, source: str) -> EngineScript:
        """Registered, and loaded into the engine now (the write batches send it by its
        digest)."""
        script = EngineScript(
            self.client.register_script(source), self.control.register_script(source)
        )
        script.control.sha = self.control.script_load(source)
        return script

    def ordered_writes(self) -> OrderedWrites:
        """The instance's one queue to the engine, shared by its stores (one order, and the
        most a round trip can carry)."""
        if not self._writes:
            self._writes.append(OrderedWrites(self.client, EnginePipe(self.url)))
        return self._writes[0]

    async def aclose(self) -> None:
        for writes in self._writes:
            await writes.aclose()
        await self.client.aclose()
        self.control.close()
