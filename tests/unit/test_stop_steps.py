"""simulator/runtime/lifecycle.py StopSteps: what the stop watchdog says of the stop's steps,
also when the stop was asked for before any step began (a start-up that waits for ever)."""

from __future__ import annotations

import re

from simulator.runtime.lifecycle import StopSteps


def test_no_step_yet_is_said_so_instead_of_failing() -> None:
    # Seen in a loaded CI run: a start-up waited for ever, the test's SIGTERM armed the
    # watchdog, and its message raised ValueError (zip of no step with one end), so the
    # watchdog's thread died without ending the process.
    steps = StopSteps()
    assert steps.current == "starting"
    assert steps.timings() == "none"


def test_each_step_with_its_seconds_the_last_until_now() -> None:
    steps = StopSteps()
    steps.at("stopping the maker fleet")
    steps.at("closing chains")
    assert steps.current == "closing chains"
    assert re.fullmatch(
        r"stopping the maker fleet \d+\.\d\d s, closing chains \d+\.\d\d s", steps.timings()
    )
