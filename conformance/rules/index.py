"""Which spec rules each test of the suite checks, whether or not this run selected the test: the
report tells a rule whose tests this run left out (``not_selected``) from a rule no test checks
(``not_covered``).

Every process records the tests it collected, selected or deselected (``-k``, ``--deselect``,
``-m``), with their rule ids and the test modules they come from; under pytest-xdist the workers
hand theirs to the controller (``workeroutput``). Test modules of the suite's directories that
this run did not collect at all (``rfqsim conformance --only AREA``, a list of files) are
collected once more, statically, in a subprocess (``pytest --collect-only`` with this module as
its plugin): seconds, no target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SPEC_MARKER = "spec"
OUTPUT_ENV = "RFQSIM_RULE_INDEX_OUT"  # set for the static collection: where to write the index
WORKER_KEY = "rfqsim_rule_index"  # workeroutput key under xdist
COLLECT_TIMEOUT_S = 180.0


def spec_rule_ids(item: pytest.Item) -> list[str]:
    """Rule ids of every ``spec`` marker on the item (function, class, module), in order."""
    ids: list[str] = []
    for mark in item.iter_markers(SPEC_MARKER):
        ids.extend(str(arg) for arg in mark.args)
    return list(dict.fromkeys(ids))


@dataclass
class RuleIndex:
    """``tests``: nodeid -> the rule ids it checks; ``modules``: test files the run collected."""

    tests: dict[str, list[str]] = field(default_factory=dict)
    modules: set[str] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)  # modules named with ::test on the command line

    def record(self, items: Iterable[pytest.Item]) -> None:
        for item in items:
            self.modules.add(str(item.path))
            rules = spec_rule_ids(item)
            if rules:
                self.tests[item.nodeid] = rules

    def record_arguments(self, args: Iterable[str], directory: Path) -> None:
        """Modules the command line named with ``::test``: only part of them was collected."""
        for arg in args:
            if "::" in arg:
                self.partial.add(str((directory / arg.split("::", 1)[0]).resolve()))

    def to_json(self) -> dict[str, Any]:
        return {
            "tests": self.tests,
            "modules": sorted(self.modules),
            "partial": sorted(self.partial),
        }

    def merge(self, data: Mapping[str, Any]) -> None:
        for nodeid, rules in dict(data.get("tests") or {}).items():
            self.tests[str(nodeid)] = [str(r) for r in rules]
        self.modules.update(str(m) for m in data.get("modules") or [])
        self.partial.update(str(m) for m in data.get("partial") or [])

    def missing_modules(self) -> list[Path]:
        """Test modules beside the collected ones that this run did not collect (or collected
        only in part)."""
        directories = {Path(m).parent for m in self.modules}
        found = {p for d in directories for p in d.glob("test_*.py")}
        return sorted(p for p in found if str(p) not in self.modules or str(p) in self.partial)

    def complete(self, rootdir: Path) -> str | None:
        """Index the modules this run left out by a static collection; None when done (or
        nothing was missing), else why it could not be done."""
        missing = self.missing_modules()
        if not missing:
            return None
        with tempfile.TemporaryDirectory(prefix="rfqsim-rule-index-") as scratch:
            out = Path(scratch) / "index.json"
            command = [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                __name__,
                *(str(p) for p in missing),
            ]
            env = {**os.environ, OUTPUT_ENV: str(out)}
            env.pop("PYTEST_XDIST_WORKER", None)
            try:
                done = subprocess.run(
                    command,
                    cwd=rootdir,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=COLLECT_TIMEOUT_S,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"the static collection of {len(missing)} test modules failed: {exc}"
            if not out.exists():
                tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
                return f"the static collection exited {done.returncode}: {' | '.join(tail)}"
            self.merge(json.loads(out.read_text(encoding="utf-8")))
        return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """(As the static collection's plugin.) Write the collected tests' rules for the parent."""
    out = os.environ.get(OUTPUT_ENV)
    if out:
        index = RuleIndex()
        index.record(session.items)
        Path(out).write_text(json.dumps(index.to_json()), encoding="utf-8")
