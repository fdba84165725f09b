"""Several instances: what one instance hands to the venue's first instance (its webhook
worker's events, its journal's entries), queued and sent there in batches, in order, over
loopback with the venue's hop secret; at the first instance itself, or while no instance can be
asked which one is first, handed to this instance's own consumer. A batch sent while the first
instance does not answer is logged and dropped."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

import aiohttp

from simulator.services.sim.instances import InstanceEntry

log = logging.getLogger("rfqsim.api")

T = TypeVar("T")


class ToFirstInstance(Generic[T]):
    def __init__(
        self,
        local: Callable[[T], None],
        encode: Callable[[T], Any],
        here: int,
        first: Callable[[], Awaitable[InstanceEntry | None]],
        headers: Callable[[], Mapping[str, str]],
        path: str,
        what: str,
    ) -> None:
        self._local = local  # this instance's consumer
        self._encode = encode  # one item as JSON-ready data
        self._here = here
        self._first = first  # the venue's first instance alive (asks the engine)
        self._headers = headers  # the venue's hop secret
        self._path = path  # where the first instance takes them
        self._what = what  # what the items are, for the log
        self._queue: list[T] = []
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()  # one batch at a time: items arrive in order
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    @property
    def idle(self) -> bool:
        """Nothing queued: an item handed to the consumer now keeps the order."""
        return not self._queue

    def put(self, item: T) -> None:
        """Queued, never raising."""
        self._queue.append(item)
        self._wake.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self._path)

    async def flush(self) -> None:
        """Every item put so far has been handed on."""
        async with self._lock:
            while self._queue:
                batch, self._queue = self._queue, []
                await self._deliver(batch)

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.flush()

    async def _deliver(self, batch: list[T]) -> None:
        try:
            first = await self._first()
        except Exception:  # the engine away: nobody to ask which instance is first
            first = None
        if first is None or first.id == self._here:
            for item in batch:
                self._local(item)
            return
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        try:
            async with self._session.post(
                first.api_url + self._path,
                json=[self._encode(item) for item in batch],
                headers=dict(self._headers()),
            ) as answer:
                if answer.status >= 300:
                    raise aiohttp.ClientResponseError(answer.request_info, (), status=answer.status)
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning(
                "%d %s not handed to instance %d, the venue's first: %s",
                len(batch),
                self._what,
                first.id,
                exc,
            )

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
