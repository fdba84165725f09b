"""`rfqsim conformance --only AREA` runs the files listed for the area: every behaviour test file
of the suite must be in one area (else `--only` can never run it), and every listed file must
exist. The suite's own machinery tests (plugin, report, rule extraction) are not an area."""

from __future__ import annotations

from conformance.cli import AREAS, TESTS_DIR

MACHINERY = {"test_plugin.py", "test_report.py", "test_rules.py"}


def test_every_behaviour_test_file_belongs_to_exactly_one_area() -> None:
    files = {path.name for path in TESTS_DIR.glob("test_*.py")}
    listed = [name for names in AREAS.values() for name in names]
    assert sorted(files - MACHINERY - set(listed)) == []
    assert sorted(set(listed) - files) == []
    assert len(listed) == len(set(listed)), "a file is listed in two areas"
