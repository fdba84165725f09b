"""simulator/cli.py `StopWatchdog` in a process of its own: a stop that outlives its deadline
ends the process with status 1 and says which step of the stop was under way, every thread's
stack (the event loop's shows what blocks it) and each task the loop still had, with the line
it waited at."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, time
    from simulator.cli import StopWatchdog

    async def waits_for_ever():
        await asyncio.sleep(3600)

    async def main():
        asyncio.create_task(waits_for_ever(), name="held-stop")
        await asyncio.sleep(0)
        watchdog = StopWatchdog(0.3, None)
        watchdog.arm()
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
    assert "stop did not finish (deadline, deadline 0.3s, while closing the app)" in err
    assert "Current thread" in err  # every thread's stack
    assert "in main" in err  # the loop's own: blocked in main's sleep
    assert "rfqsim: task held-stop at <string>:" in err
    assert "waits_for_ever" in err
