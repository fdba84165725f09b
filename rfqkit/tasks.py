"""Long-running asyncio tasks of the cleanup contexts: loops that follow the simulator clock,
and stopping them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from typing import Any, Protocol


class LoopClock(Protocol):
    """What a clock-driven loop needs of a clock (the simulator's and the sandbox's have it)."""

    def time(self) -> float: ...

    async def sleep_until(self, unix_seconds: float) -> None: ...


async def step_forever(
    clock: LoopClock,
    step: Callable[[], Awaitable[object]],
    next_due: Callable[[], float | None],
    *,
    max_sleep_s: float,
    log: logging.Logger,
    what: str,
) -> None:
    """Runs `step`, then sleeps on the simulator clock until `next_due()` (an advance wakes it
    at once), at most `max_sleep_s`: work that appears between steps is found that soon. A
    failing step is logged and retried; it never ends the loop."""
    while True:
        try:
            await step()
        except Exception:
            log.exception("%s failed; retrying", what)
        due = next_due()
        wake = clock.time() + max_sleep_s
        await clock.sleep_until(min(due, wake) if due is not None else wake)
        # A step that finds nothing to await and a due time already past would otherwise never
        # give the event loop back: every other task would starve.
        await asyncio.sleep(0)


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancels every task, then awaits each, so none outlives its cleanup context."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def cancel_others(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancels every unfinished task but the one calling, then waits for them all, whatever
    each raises (a client's tasks, cancelled by one of them as it closes)."""
    current = asyncio.current_task()
    pending = [t for t in tasks if not t.done() and t is not current]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


@contextlib.asynccontextmanager
async def running(job: Coroutine[Any, Any, None], *, name: str) -> AsyncIterator[None]:
    """`job` as a task named `name` for the body of the `async with`, cancelled and awaited
    when it ends (a cleanup context's one background job)."""
    task = asyncio.create_task(job, name=name)
    try:
        yield
    finally:
        await cancel_and_wait([task])
