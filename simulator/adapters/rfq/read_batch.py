"""Coalesced chain reads: every eth_call the quote path asks of one chain during one turn of the
event loop goes to the node as one JSON-RPC batch, sent at the end of that turn.

Under load, several auctions check their makers' answers in the same turn (four makers answer
one request at about the same moment, and many requests are in flight): each check used to be
its own HTTP round trip to Anvil, and the HTTP client's work per round trip was a large share of
the simulator's CPU per quote. Batching changes no read's freshness: each call is still sent
after its caller asked for it and answered from the node's latest state, so a quote is checked
against the chain as it is then, exactly as before (docs/performance.md says why each read must
stay fresh)."""

from __future__ import annotations

import asyncio

from rfqkit.chain import AnvilChain, CallReverted, ChainUnavailable, call_params

MAX_BATCH = 200  # calls per round trip; more wait for the next one


class ReadBatcher:
    def __init__(self, chain: AnvilChain) -> None:
        self.chain = chain
        # Calls asked for in this turn: (to, data, the caller's future).
        self._pending: list[tuple[str | None, bytes, asyncio.Future[bytes]]] = []
        self._tasks: set[asyncio.Task[None]] = set()  # batches in flight (kept referenced)

    async def call(self, to: str | None, data: bytes) -> bytes:
        """One eth_call's raw answer; raises ChainUnavailable or CallReverted like chain.call."""
        return await self._enqueue(to, data)

    async def calls(self, calls: list[tuple[str | None, bytes]]) -> list[bytes]:
        """Several eth_calls, all in the batch of this turn; the first failure raises."""
        futures = [self._enqueue(to, data) for to, data in calls]
        results = await asyncio.gather(*futures, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return [r for r in results if isinstance(r, bytes)]

    def _enqueue(self, to: str | None, data: bytes) -> asyncio.Future[bytes]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bytes] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append((to, data, future))
        return future

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        for start in range(0, len(pending), MAX_BATCH):
            task = asyncio.create_task(self._send(pending[start : start + MAX_BATCH]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[tuple[str | None, bytes, asyncio.Future[bytes]]]) -> None:
        futures = [future for _, _, future in batch]
        try:
            outcomes = await self.chain.batch_outcomes(
                [("eth_call", call_params(to, data)) for to, data, _ in batch]
            )
        except Exception as exc:  # the round trip failed: every caller in it hears so
            _fail(futures, exc)
            return
        except BaseException:  # cancelled (shutdown): nobody may wait forever
            _fail(futures, ChainUnavailable(f"chain {self.chain.chain_id}: read cancelled"))
            raise
        for future, outcome in zip(futures, outcomes, strict=True):
            if future.done():
                continue  # the caller gave up (cancelled)
            if isinstance(outcome, ChainUnavailable | CallReverted):
                future.set_exception(outcome)
            elif isinstance(outcome, str) and outcome.startswith("0x"):
                future.set_result(bytes.fromhex(outcome[2:]))
            else:
                future.set_exception(ChainUnavailable(f"eth_call answered {outcome!r}"))

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _fail(futures: list[asyncio.Future[bytes]], exc: Exception) -> None:
    for future in futures:
        if not future.done():
            future.set_exception(exc)
