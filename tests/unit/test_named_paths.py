"""The texts stand alone: every path a doc (docs/, the READMEs) or a comment or docstring of our
code names exists in the repository, and none names a file outside it (a design note, a spec
folder, a machine's own directories). Read from the files, so nothing is imported.

A path is a token with a slash that ends in a file extension or starts with one of our folders
(`simulator/...`, `api/...`, `services/...`); it may be relative to the repository, to
`simulator/`, or to any folder above the file that names it. A `*` or a `<placeholder>` in it
is a glob. What the simulator and its tools write at run time is named but not committed
(`WRITTEN_AT_RUN_TIME`)."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = (
    "simulator",
    "rfqkit",
    "makers",
    "provider_sandbox",
    "rfqsim",
    "conformance",
    "loadtests",
    "bench",
    "contracts",
    "scripts",
    "tests",
)
FOLDERS = (*PACKAGES, "docs", "api", "services", "adapters", "runtime", "console")
EXTENSION = r"\.(?:py|md|js|json|yaml|yml|toml|sol|html|css|sh|txt)"
PLACEHOLDER = re.compile(r"<[^<>/]{1,40}>")  # `<section slug>`: one path segment, spaces or not
TOKEN = re.compile(r"(?<![\w/.$:-])([A-Za-z_<][\w.<>*-]*(?:/[\w.<>*-]+)+/?)")
# Written by the simulator and its tools when they run, never committed (or under a placeholder
# folder: `<tmp>/ready.json`).
WRITTEN_AT_RUN_TIME = ("conformance-report/", "loadtests/reports", "DIR/", "<")
# Example names in samples and usage lines (an integrator's own test file, a profile `X`).
EXAMPLES = ("conformance/tests/test_x.py", "loadtests/profiles/X.py")
# Names of files outside the repository: a design note, the spec folder, a machine's paths.
OUTSIDE = re.compile(r"\bDESIGN(?:\.md)?\b|/work/|\bshared/spec\b|/home/|/Users/")


def sources() -> Iterator[Path]:
    yield REPO / "README.md"
    yield from sorted((REPO / "docs").rglob("*.md"))
    for package in PACKAGES:
        yield from sorted(p for p in (REPO / package).rglob("*") if p.suffix in (".py", ".md"))


def texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of a Markdown file's lines, or of a Python file's comments and docstrings."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        yield from enumerate(source.splitlines(), 1)
        return
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        docstring = token.type == tokenize.STRING and token.string.lstrip("rbuRBU")[:3] == '"""'
        if token.type == tokenize.COMMENT or docstring:
            yield token.start[0], token.string


def named_path(token: str) -> str | None:
    path = token.rstrip("/.,;:)*")
    if re.search(EXTENSION + r"$", path) or path.split("/")[0] in FOLDERS:
        return path
    return None


@cache
def bases(folder: Path) -> tuple[Path, ...]:
    above = [folder, *folder.parents]
    return (REPO, REPO / "simulator", *(p for p in above if p.is_relative_to(REPO)))


def exists(path: str, named_in: Path) -> bool:
    if path.startswith(WRITTEN_AT_RUN_TIME) or path in EXAMPLES:
        return True
    pattern = re.sub(r"<[^>/]*>", "*", path)
    for base in bases(named_in.parent):
        if "*" in pattern:
            if next(base.glob(pattern), None) is not None:
                return True
        elif (base / pattern).exists():
            return True
    return False


def test_every_path_a_text_names_exists() -> None:
    missing = [
        f"{source.relative_to(REPO)}:{line}: {path}"
        for source in sources()
        for line, text in texts(source)
        for match in TOKEN.finditer(PLACEHOLDER.sub("<x>", text))
        if (path := named_path(match.group(1))) is not None and not exists(path, source)
    ]
    assert missing == [], "paths that do not exist:\n" + "\n".join(missing)


def test_no_text_names_a_file_outside_the_repository() -> None:
    found = [
        f"{source.relative_to(REPO)}:{line}: {match.group(0)}"
        for source in sources()
        if source != Path(__file__)
        for line, text in texts(source)
        for match in OUTSIDE.finditer(text)
    ]
    assert found == [], "texts that name files outside the repository:\n" + "\n".join(found)


def test_the_checks_can_fail() -> None:
    assert named_path("simulator/api/middleware.py") == "simulator/api/middleware.py"
    assert named_path("buy/sell") is None  # prose, not a path
    here = REPO / "simulator" / "services" / "rfq" / "ports.py"
    assert not exists("api/middleware.py", here)
    assert exists("api/http/middleware.py", here)
    assert exists("services/<area>/ports.py", here)  # a placeholder is a glob
    assert not exists("services/<area>/nothing_like_this.py", here)
    assert OUTSIDE.search('as DESIGN.md "Layering" says') is not None
