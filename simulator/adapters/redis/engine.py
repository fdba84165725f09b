"""The connections to the shared engine (Redis or Valkey) and the two ways its stores use it.

- Everything an instance sends on the request path goes through its one `OrderedWrites` queue:
  checks (a check-and-take is one Lua script, atomic on the server whichever instance sends
  it; awaited) and writes a caller does not wait for (a slot extended or released), in the
  order given; one task sends everything queued as one pipelined round trip, so under load
  many requests share a round trip and a check never reads past its own instance's writes.
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


def _all_sent(sent: list[asyncio.Future[None]]) -> None:
    for future in sent:
        _settle(future, None)


# A script queued: its arguments, who awaits its answer (None: a write) and who awaits it
# being written (`send`)
_Queued = tuple[
    EngineScript, Sequence[Arg], asyncio.Future[Any] | None, asyncio.Future[None] | None
]


class OrderedWrites:
    """Scripts sent in the order given, by one task: each time everything queued since the last
    round trip goes as one pipelined round trip, writes (`put`, not awaited) and checks
    (`then`, awaited for their answers) alike. Under load the checks and writes of many
    requests share a round trip; the engine applies them in the instance's order."""

    def __init__(self, client: aredis.Redis, control: redis.Redis, pipe: EnginePipe) -> None:
        self._client = client
        self._control = control
        self._pipe = pipe  # the queue's own connection (pipe.py)
        self._pending: list[_Queued] = []  # not yet sent
        self._wake = asyncio.Event()  # something was queued
        self._idle = asyncio.Event()  # nothing queued nor in flight
        self._idle.set()
        self._task: asyncio.Task[None] | None = None

    def put(self, script: EngineScript, args: Sequence[Arg]) -> None:
        self._queue(script, args, None, None)

    def send(self, script: EngineScript, args: Sequence[Arg]) -> asyncio.Future[None]:
        """A write its caller waits for only until it is on the engine's connection (in the
        kernel's hands: delivered even if this process dies next), not for its answer, which
        is a write's (an error logged). Fails if it cannot be written (engine unreachable)."""
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        sent.add_done_callback(_retrieve)
        self._queue(script, args, None, sent)
        return sent

    async def then(self, script: EngineScript, args: Sequence[Arg]) -> Any:
        """Run `script` after every write queued so far, in the next round trip; its answer,
        or its error (a write's error is logged)."""
        return await self.submit(script, args)

    def submit(self, script: EngineScript, args: Sequence[Arg]) -> asyncio.Future[Any]:
        """`then` without waiting now: the future of its answer (an error nobody awaits is
        dropped, as a write's is logged)."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        answer.add_done_callback(_retrieve)
        self._queue(script, args, answer, None)
        return answer

    def _queue(
        self,
        script: EngineScript,
        args: Sequence[Arg],
        answer: asyncio.Future[Any] | None,
        sent: asyncio.Future[None] | None,
    ) -> None:
        self._pending.append((script, args, answer, sent))
        self._idle.clear()
        self._wake.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="engine-writes")

    async def drained(self) -> None:
        """Every script queued so far has reached the engine (or failed and was logged)."""
        await self._idle.wait()

    def apply_now(self) -> None:
        """Send what is still queued through the blocking client (before a state dump or
        load). A round trip already in flight on the asyncio client may land after it."""
        pending, self._pending = self._pending, []
        for script, args, answer, sent in pending:
            result = script.run_now(args)
            if answer is not None and not answer.done():
                answer.set_result(result)
            _settle(sent, None)
        if not self._pending:
            self._idle.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending, []
            if batch:
                sent = [s for *_, s in batch if s is not None]
                try:
                    answers = await self._send(
                        [(script, args) for script, args, *_ in batch],
                        partial(_all_sent, sent),
                    )
                except redis.RedisError as exc:
                    answers = [exc] * len(batch)
                    for s in sent:  # if it was not written: the engine is not there
                        _settle(s, exc)
                _all_sent(sent)  # answered (written, if it had not said so)
                failed: list[Any] = []
                for (_, _, waiting, _), answer in zip(batch, answers, strict=True):
                    if waiting is None:
                        failed.append(answer)
                    elif waiting.done():
                        pass  # its request was cancelled meanwhile
                    elif isinstance(answer, Exception):
                        waiting.set_exception(answer)
                    else:
                        waiting.set_result(answer)
                self._log_failed(failed)
            if not self._pending:
                self._idle.set()

    @staticmethod
    def _log_failed(answers: list[Any]) -> None:
        failed = [answer for answer in answers if isinstance(answer, Exception)]
        if failed:
            # What was lost lapses by itself (every entry has its end); say so once.
            log.warning("shared engine: %d writes not applied: %s", len(failed), failed[0])

    async def _send(
        self, batch: list[tuple[EngineScript, Sequence[Arg]]], written: Callable[[], object]
    ) -> list[Any]:
        """One round trip: the scripts by their digests (loaded when registered, so no
        SCRIPT EXISTS per batch); those an engine that restarted no longer knows are loaded
        and sent again (each write only acts on what still exists, so their lateness is
        harmless). `written` is called once the batch is on the connection. Each script's
        answer or error, in order; losing the engine raises."""
        answers = await self._pipe.run(
            [("EVALSHA", script.request.sha, 0, *args) for script, args in batch], written
        )
        unknown = [
            i
            for i, answer in enumerate(answers)
            if isinstance(answer, redis.exceptions.NoScriptError)
        ]
        if unknown:
            for script in {batch[i][0] for i in unknown}:
                await self._client.script_load(script.request.script)
            for i, answer in zip(
                unknown, await self._pipelined([batch[i] for i in unknown]), strict=True
            ):
                answers[i] = answer
        return answers

    async def _pipelined(self, batch: list[tuple[EngineScript, Sequence[Arg]]]) -> list[Any]:
        return await self._pipe.run(
            [("EVALSHA", script.request.sha, 0, *args) for script, args in batch]
        )

    async def aclose(self) -> None:
        if self._task is not None:
            try:
                async with asyncio.timeout(2):
                    await self.drained()
            except TimeoutError:
                log.warning("shared engine: %d writes left unsent on stop", len(self._pending))
            await cancel_and_wait([self._task])
            self._task = None
        self._pipe.close()
        stopping = redis.ConnectionError("the instance is stopping")
        for _, _, waiting, sent in self._pending:
            if waiting is not None and not waiting.done():
                waiting.set_exception(stopping)
            _settle(sent, stopping)
        self._pending = []


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
            self._writes.append(OrderedWrites(self.client, self.control, EnginePipe(self.url)))
        return self._writes[0]

    async def aclose(self) -> None:
        for writes in self._writes:
            await writes.aclose()
        await self.client.aclose()
        self.control.close()
