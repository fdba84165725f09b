"""The report directory of a run: ``matrix.json``, ``matrix.md``, ``matrix.html`` and
``junit.xml`` (conformance/report/__init__.py builds and renders the matrix,
conformance/report/html.py the page)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown


def write_report(directory: Path, matrix: Mapping[str, Any]) -> tuple[Path, Path, Path]:
    """matrix.json, matrix.md, matrix.html and junit.xml in `directory`; the paths of the json,
    the markdown and junit.xml."""
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "matrix.json"
    md_path = directory / "matrix.md"
    junit_path = directory / "junit.xml"
    json_path.write_text(json.dumps(matrix, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(matrix), encoding="utf-8")
    (directory / "matrix.html").write_text(render_html(matrix), encoding="utf-8")
    junit_path.write_text(render_junit(matrix), encoding="utf-8")
    return json_path, md_path, junit_path
