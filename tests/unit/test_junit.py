"""rfqkit/junit.py, the one JUnit writer of the conformance report and rfqsim proxy."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rfqkit import junit


def test_totals_cases_properties_failures_and_skips() -> None:
    suites = [
        junit.Suite(
            "conformance.rfq",
            [
                junit.Case("ok", "t.rfq", 1.25, "t/rfq.py", [("spec_rule", "rfq/a")]),
                junit.Case("bad", "t.rfq", 0.5, failure=("assert 1 == 2", "E  assert 1 == 2")),
            ],
            properties=[("exchanges", "7")],
        ),
        junit.Suite("conformance.v1", [junit.Case("later", "t.v1", skipped="needs <a key>")]),
    ]
    root = ET.fromstring(junit.render("rfqsim conformance", suites, timestamp="2026-11-29T17:00Z"))
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("name", "tests", "failures", "skipped", "time")} == {
        "name": "rfqsim conformance",
        "tests": "3",
        "failures": "1",
        "skipped": "1",
        "time": "1.750",
    }
    assert root.get("timestamp") == "2026-11-29T17:00Z"
    rfq, v1 = root.findall("testsuite")
    assert (rfq.get("name"), rfq.get("tests"), rfq.get("failures")) == ("conformance.rfq", "2", "1")
    assert [p.get("value") for p in rfq.findall("properties/property")] == ["7"]
    ok, bad = rfq.findall("testcase")
    assert (ok.get("file"), ok.get("time")) == ("t/rfq.py", "1.250")
    assert [p.get("value") for p in ok.iter("property")] == ["rfq/a"]
    failure = bad.find("failure")
    assert failure is not None
    assert (failure.get("message"), failure.text) == ("assert 1 == 2", "E  assert 1 == 2")
    (later,) = v1.findall("testcase")
    skipped = later.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "needs <a key>"  # escaped in the file, read back as is
