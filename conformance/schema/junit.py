"""JUnit XML for a schemathesis run (``conformance-report/schemathesis-junit.xml`` by default).

Layout: one ``<testsuite>`` per pass (``schemathesis.keyed``, ``schemathesis.keyless``) with one
``<testcase>`` per API operation: a ``<failure>`` per distinct unaccepted failure, ``<skipped>``
when no phase tested it, the request count and status histogram in ``<system-out>``. A last
suite, ``schemathesis.deviations``, has one case per entry of the deviations file: passed with
its hit count when it matched, skipped ("not seen in this run") otherwise, so a reviewer sees
which accepted deviations the run actually relied on. Credentials never appear (requests are
recorded with Authorization, X-API-Key and X-Rfq-Claim redacted).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from conformance.schema.results import FailureRecord, OperationStats, PassResult, RunResult


def _case(suite: ET.Element, classname: str, name: str, seconds: float = 0.0) -> ET.Element:
    return ET.SubElement(
        suite, "testcase", {"classname": classname, "name": name, "time": f"{seconds:.3f}"}
    )


def _failure(case: ET.Element, failure: FailureRecord) -> None:
    element = ET.SubElement(
        case,
        "failure",
        {"message": failure.title, "type": ", ".join(failure.checks) or "check error"},
    )
    element.text = failure.describe()


def _operation_text(stats: OperationStats) -> str:
    outcomes = ", ".join(f"{outcome}: {n}" for outcome, n in stats.outcomes.most_common())
    phases = ", ".join(f"{phase}: {n}" for phase, n in sorted(stats.phases.items()))
    return f"requests: {stats.requests}\nresponses: {outcomes}\nphases: {phases}"


def _pass_suite(root: ET.Element, result: RunResult, run: PassResult) -> None:
    classname = f"schemathesis.{run.name}"
    suite = ET.SubElement(root, "testsuite", {"name": classname})
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("base_url", result.base_url),
        ("seed", str(result.settings.seed)),
        ("max_examples", str(result.settings.max_examples)),
        ("requests", str(run.requests)),
        ("links_followed", ", ".join(f"{k}={v}" for k, v in sorted(run.transitions.items()))),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    by_operation: dict[str, list[FailureRecord]] = {}
    for failure in run.failures.values():
        by_operation.setdefault(failure.operation, []).append(failure)
    labels = sorted(set(run.operations) | set(by_operation))
    failures = skipped = 0
    for label in labels:
        stats = run.operations.get(label, OperationStats())
        case = _case(suite, classname, label, stats.elapsed)
        found = by_operation.get(label, [])
        for failure in found:
            _failure(case, failure)
        failures += bool(found)
        if not found and stats.requests == 0:
            ET.SubElement(case, "skipped", {"message": "; ".join(stats.skipped) or "not tested"})
            skipped += 1
        ET.SubElement(case, "system-out").text = _operation_text(stats)
    for error in run.errors:
        case = _case(suite, classname, "engine error")
        ET.SubElement(case, "error", {"message": error.splitlines()[0][:200]}).text = error
        failures += 1
        labels.append("engine error")
    suite.set("tests", str(len(labels)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", f"{run.elapsed:.3f}")


def _deviation_suite(root: ET.Element, result: RunResult) -> None:
    classname = "schemathesis.deviations"
    suite = ET.SubElement(root, "testsuite", {"name": classname})
    skipped = 0
    for deviation in result.deviations.deviations:
        case = _case(suite, classname, deviation.id)
        usage = result.deviations.usage.get(deviation.id)
        text = (
            f"{deviation.kind}: {deviation.check} on {', '.join(deviation.operations)}\n"
            f"reason: {deviation.reason}"
        )
        if deviation.defect:
            text += f"\ndefect: {deviation.defect}"
        if usage is None:
            ET.SubElement(case, "skipped", {"message": "not seen in this run"})
            skipped += 1
        else:
            text += f"\nmatched {usage.hits} times, e.g. {usage.example}"
        ET.SubElement(case, "system-out").text = text
    suite.set("tests", str(len(result.deviations.deviations)))
    suite.set("failures", "0")
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", "0.000")


def render(result: RunResult) -> bytes:
    root = ET.Element(
        "testsuites",
        {
            "name": "rfqsim schemathesis",
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )
    for run in result.passes:
        _pass_suite(root, result, run)
    _deviation_suite(root, result)
    suites = root.findall("testsuite")
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in suites)))
    root.set("time", f"{sum(p.elapsed for p in result.passes):.3f}")
    ET.indent(root)
    rendered: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return rendered


def write(result: RunResult, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_bytes(render(result))
    temporary.replace(path)
    return path
