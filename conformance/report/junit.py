"""``junit.xml``: the run report (conformance/report/__init__.py `build_matrix`) as JUnit XML,
written by the one JUnit writer (rfqkit/junit.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.report import FAILED, SKIPPED
from rfqkit import junit


def render_junit(matrix: Mapping[str, Any]) -> str:
    """JUnit XML of every test the report saw (one testsuite per area), with the spec rules
    each checks as properties (rfqkit/junit.py)."""
    tests: list[Mapping[str, Any]] = matrix.get("tests", [])
    suites = []
    for area in dict.fromkeys(t["area"] for t in tests):
        cases = []
        for test in (t for t in tests if t["area"] == area):
            path, _, name = str(test["nodeid"]).partition("::")
            outcome = test["outcome"]
            cases.append(
                junit.Case(
                    name=name or path,
                    classname=path.removesuffix(".py").replace("/", "."),
                    time_s=float(test.get("duration_s", 0)),
                    file=path,
                    properties=[("spec_rule", rule) for rule in test["rules"]],
                    failure=(
                        (
                            test.get("reason", "failed"),
                            test.get("details") or test.get("reason", ""),
                        )
                        if outcome == FAILED
                        else None
                    ),
                    skipped=test.get("reason", "") if outcome == SKIPPED else None,
                )
            )
        suites.append(junit.Suite(f"conformance.{area}", cases))
    return junit.render("rfqsim conformance", suites, timestamp=str(matrix["generated_at"]))
