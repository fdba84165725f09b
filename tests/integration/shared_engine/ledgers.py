"""Ledgers of one kind for the shared engine's contract tests: in memory (one instance) or on a
real redis-server (several instances, each its own connections), on one clock."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Generic, Protocol, TypeVar, runtime_checkable

import pytest
import redis

from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.server import RedisNode
from simulator.clock import Clock

KINDS = ["memory", "shared"]
LedgerT = TypeVar("LedgerT")
_prefixes = itertools.count()


@runtime_checkable
class Drains(Protocol):
    async def drained(self) -> None: ...


class Ledgers(Generic[LedgerT]):
    """`new` makes another ledger on the same state (another instance's view of the venue; the
    in-memory kind has one per process); `drained` waits until a shared ledger's writes have
    reached the engine (the in-memory one applies them at once)."""

    def __init__(
        self,
        node: RedisNode | None,
        memory: Callable[[Clock], LedgerT],
        shared: Callable[[SharedEngine, Clock], LedgerT],
        clock: Clock | None = None,
    ) -> None:
        self.clock = clock or Clock()
        self._node = node
        self._memory = memory
        self._shared = shared
        self._prefix = f"t{next(_prefixes)}:"
        self.engines: list[SharedEngine] = []
        self.made: list[LedgerT] = []

    def new(self) -> LedgerT:
        if self._node is None:
            assert not self.made, "one in-memory ledger per process"
            ledger = self._memory(self.clock)
        else:
            engine = SharedEngine(self._node.url, prefix=self._prefix)
            self.engines.append(engine)
            ledger = self._shared(engine, self.clock)
        self.made.append(ledger)
        return ledger

    async def drained(self) -> None:
        for ledger in self.made:
            if self._node is not None:
                assert isinstance(ledger, Drains)
                await ledger.drained()

    def scripts_run(self) -> int:
        """How many scripts the engine has run (its own count); 0 in memory."""
        if self._node is None:
            return 0
        with redis.Redis.from_url(self._node.url) as client:
            stats = client.info("commandstats").get("cmdstat_evalsha", {})
        return int(stats.get("calls", 0))

    async def ran(self, since: int, more: int) -> None:
        """A waiting request has had its chance to check again: in memory, a few turns of the
        loop (its wake-up and check are synchronous); on the engine, `more` scripts have run
        since `since` (the engine counts them)."""
        if self._node is None:
            for _ in range(3):
                await asyncio.sleep(0)
            return
        for _ in range(1000):  # the engine's count is polled: it has no event to wait on
            if self.scripts_run() >= since + more:
                return
            await asyncio.sleep(0.01)
        pytest.fail(f"the engine ran {self.scripts_run() - since} scripts, not {more}, in 10 s")


@asynccontextmanager
async def ledgers_of(
    request: pytest.FixtureRequest,
    memory: Callable[[Clock], LedgerT],
    shared: Callable[[SharedEngine, Clock], LedgerT],
    clock: Clock | None = None,
) -> AsyncIterator[Ledgers[LedgerT]]:
    """The kind `request.param` names; the shared kind on the module's redis-server."""
    node = request.getfixturevalue("redis_node") if request.param == "shared" else None
    made = Ledgers(node, memory, shared, clock)
    try:
        yield made
    finally:
        for engine in made.engines:
            await engine.aclose()
