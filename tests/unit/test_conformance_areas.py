"""`rfqsim conformance --only AREA` runs the files listed for the area: every test file of the
suite must be in one area (else `--only` can never run it), and every listed file must exist.
The suite holds only tests of the service: the harness's own tests (plugin, report, rule
extraction) live in tests/unit/conformance."""

from __future__ import annotations

from conformance.harness.cli import AREAS, TESTS_DIR


def test_every_behaviour_test_file_belongs_to_exactly_one_area() -> None:
    files = {path.name for path in TESTS_DIR.glob("test_*.py")}
    listed = [name for names in AREAS.values() for name in names]
    assert sorted(files - set(listed)) == []
    assert sorted(set(listed) - files) == []
    assert len(listed) == len(set(listed)), "a file is listed in two areas"
