"""simulator/cli.py `StopWatchdog` in a process of its own: a stop that outlives its deadline
ends the process with status 1 and says which step of the stop was under way and what each
step took, every thread's stack (the event loop's shows what blocks it) and each task the loop
still had, with the chain of awaits down to the line it waited at."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, time
    from simulator.cli import StopWatchdog

    async def inner_wait():
        await asyncio.sleep(3600)

    async def waits_for_ever():
        await inner_wait()

    async def main():
        asyncio.create_task(waits_for_ever(), name="held-stop")
        await asyncio.sleep(0)
        watchdog = StopWatchdog(0.3, None)
        watchdog.arm()
        watchdog.at("stopping the maker fleet")
        time.sleep(0.1)
        watchdog.at("closing the app")
        time.sleep(30)  # the loop blocked: only the watchdog's thread can end this

    asyncio.run(main())
    """
)


def test_a_stop_past_its_deadline_exits_and_says_where_it_was_held() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=25, check=False
    )
    assert done.returncode == 1
    err = done.stderr
    said = re.search(
        r"stop did not finish \(deadline, deadline 0\.3s, while closing the app; steps: "
        r"stopping the maker fleet (\d+\.\d\d) s, closing the app (\d+\.\d\d) s\)",
        err,
    )
    assert said is not None, err
    fleet_s, app_s = (float(s) for s in said.groups())
    assert fleet_s >= 0.1  # each step's own time
    assert app_s > 0  # the last one's, until the deadline
    assert "Current thread" in err  # every thread's stack
    assert "in main" in err  # the loop's own: blocked in main's sleep
    # the whole chain of awaits, outermost first, down to the line the task is suspended at
    held = next(line for line in err.splitlines() if line.startswith("rfqsim: task held-stop"))
    assert held.startswith("rfqsim: task held-stop at <string>:"), held
    assert held.index("waits_for_ever") < held.index("inner_wait") < held.index(" sleep"), held
