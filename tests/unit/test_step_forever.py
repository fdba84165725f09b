"""rfqkit.tasks.step_forever never starves the event loop: a step that awaits nothing and a due
time already past (an RFQ whose receipt cannot be read yet) still lets every other task run."""

from __future__ import annotations

import asyncio
import logging

import pytest

from rfqkit.tasks import cancel_and_wait, step_forever
from simulator.clock import Clock


@pytest.mark.timeout(10)
async def test_an_always_due_step_still_gives_the_loop_back() -> None:
    clock = Clock()
    steps = 0

    async def step() -> None:  # never awaits: like a sweep whose chain read fails at once
        nonlocal steps
        steps += 1

    loop_task = asyncio.create_task(
        step_forever(
            clock,
            step,
            lambda: clock.time() - 1,  # always overdue
            max_sleep_s=1.0,
            log=logging.getLogger("test"),
            what="always due",
        )
    )
    other = asyncio.Event()

    async def other_task() -> None:
        other.set()

    helper = asyncio.create_task(other_task())
    await asyncio.wait_for(other.wait(), timeout=5)
    await cancel_and_wait([loop_task, helper])
    assert steps >= 1
