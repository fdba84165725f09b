"""Time per part of the suite, printed at the end of every pytest run in this repository: for
unit (tests/unit), integration (tests/integration and tests/integrator) and conformance
(conformance/tests), how many tests ran and the sum of their set-up, call and tear-down times.

The sums are test time, not wall time: with `-n 2` two workers add to them at once, and a
module- or session-scoped fixture's set-up counts in the first test that needs it. They show
which part grows. Under pytest-xdist the workers send every report to the controller, which
calls `pytest_runtest_logreport` for each, so the controller alone counts and prints; a worker
prints nothing. Loaded by the repository's conftest.py; docs/testing.md keeps the figures."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from _pytest.terminal import TerminalReporter

# The parts, in the order they are printed, and the path prefixes of their node ids
PARTS: dict[str, tuple[str, ...]] = {
    "unit": ("tests/unit/",),
    "integration": ("tests/integration/", "tests/integrator/"),
    "conformance": ("conformance/tests/",),
}


def part_of(nodeid: str) -> str:
    for part, prefixes in PARTS.items():
        if nodeid.startswith(prefixes):
            return part
    return "other"


@dataclass
class PartTime:
    tests: set[str] = field(default_factory=set)
    seconds: float = 0.0


class PartTimes:
    def __init__(self) -> None:
        self.parts: dict[str, PartTime] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        part = self.parts.setdefault(part_of(report.nodeid), PartTime())
        part.tests.add(report.nodeid)
        part.seconds += report.duration

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        if not self.parts:
            return
        terminalreporter.write_sep("=", "time per part (sum of set-up + call + tear-down)")
        order = [*PARTS, "other"]
        for name in sorted(self.parts, key=order.index):
            part = self.parts[name]
            terminalreporter.write_line(
                f"{name:<12} {len(part.tests):>5} tests {part.seconds:>9.1f} s"
                f" ({part.seconds / 60:.1f} min)"
            )


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: its reports go to the controller
        return
    config.pluginmanager.register(PartTimes(), "rfqsim-part-times")
