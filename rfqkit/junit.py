"""JUnit XML, the one writer of the project's reports (the conformance suite's ``junit.xml`` and
``rfqsim proxy``'s): a ``testsuites`` root with the totals, one ``testsuite`` per group, each
``testcase`` with its properties (the spec rules it checks), its failure (message and full
text) or its skip. What CI systems (GitLab, Jenkins, GitHub annotators) read."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Case:
    name: str
    classname: str
    time_s: float = 0.0
    file: str | None = None
    properties: list[tuple[str, str]] = field(default_factory=list)
    failure: tuple[str, str] | None = None  # (message, the full text)
    skipped: str | None = None  # the skip's reason


@dataclass
class Suite:
    name: str
    cases: list[Case]
    properties: list[tuple[str, str]] = field(default_factory=list)


def _totals(cases: Sequence[Case]) -> dict[str, str]:
    return {
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c.failure is not None)),
        "skipped": str(sum(1 for c in cases if c.failure is None and c.skipped is not None)),
        "errors": "0",
        "time": f"{sum(c.time_s for c in cases):.3f}",
    }


def _properties(parent: ET.Element, properties: Sequence[tuple[str, str]]) -> None:
    if properties:
        into = ET.SubElement(parent, "properties")
        for name, value in properties:
            ET.SubElement(into, "property", name=name, value=value)


def render(name: str, suites: Sequence[Suite], timestamp: str | None = None) -> str:
    """The whole document, XML declaration included."""
    every = [case for suite in suites for case in suite.cases]
    root = ET.Element("testsuites", {"name": name, **_totals(every)})
    if timestamp is not None:
        root.set("timestamp", timestamp)
    for suite in suites:
        element = ET.SubElement(root, "testsuite", {"name": suite.name, **_totals(suite.cases)})
        _properties(element, suite.properties)
        for case in suite.cases:
            attributes = {"classname": case.classname, "name": case.name}
            if case.file is not None:
                attributes["file"] = case.file
            attributes["time"] = f"{case.time_s:.3f}"
            testcase = ET.SubElement(element, "testcase", attributes)
            _properties(testcase, case.properties)
            if case.failure is not None:
                failure = ET.SubElement(testcase, "failure", message=case.failure[0])
                failure.text = case.failure[1]
            elif case.skipped is not None:
                ET.SubElement(testcase, "skipped", message=case.skipped)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
