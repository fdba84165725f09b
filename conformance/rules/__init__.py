"""The rule list: every normative line of the three spec documents, with a stable id. A rule is
one table row, one numbered or bulleted list item, or one sentence of a prose paragraph inside
the documents' ``##`` sections (the title and intro above the first ``##`` are scope statements
and are skipped); its id is built from the document key, a short section path and a row key, so
it reads like an address and survives unrelated edits (``rfq/errors/404-not_found`` for an error
row, ``rfq/states/quoted-post-v2-rfq-id-cancel`` for a transition, ``rfq/auth/proof-of-control/
rule-2`` for a numbered item under "Rules:"; ``docs/conformance.md`` describes the scheme in
full). The markdown is read by :mod:`conformance.rules.parser` (key helpers in
:mod:`conformance.rules.text`); this module makes its drafts into :class:`Rule` records with
unique ids and their kind, loads and caches the three documents and lists them
(``python -m conformance.rules``).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.rules.parser import Parser

# File name prefix -> document key used in rule ids.
DOCUMENTS: dict[str, str] = {
    "1-rfq-v2.md": "rfq",
    "2-ramp-v2.md": "ramp",
    "3-v1-and-rates-feed.md": "v1",
}


@dataclass(frozen=True)
class Rule:
    """One normative statement of the spec."""

    id: str
    document: str  # document key: rfq, ramp or v1
    section: str  # heading path, e.g. "Errors" or "Resources and their fields > RFQ record"
    row_label: str  # what identifies the statement inside its section (first cell, label, n.)
    text: str  # the statement itself, markdown kept
    kind: str = "rule"  # "rule", or "not_shown" when it only records that the spec is silent
    source: str = ""  # file name inside the spec directory
    line: int = 0  # 1-based line in that file


def default_spec_dir() -> Path:
    """``docs/spec`` of the repository this package lives in."""
    return Path(__file__).resolve().parents[2] / "docs" / "spec"


def _not_shown(text: str) -> bool:
    """True when every clause of the statement only says that something is not shown."""
    clauses = [c.strip() for c in re.split(r"[.;]\s+|[.;]$", text) if c.strip()]
    return bool(clauses) and all("not shown" in c.lower() for c in clauses)


def parse_document(doc_key: str, text: str, source: str = "") -> list[Rule]:
    """Rules of one document, ids not yet made unique across documents (they are per doc)."""
    drafts = Parser(doc_key, text.splitlines()).parse()
    used: set[str] = set()
    rules: list[Rule] = []
    for draft in drafts:
        base = "/".join((doc_key, *draft.path, draft.key))
        rule_id, suffix = base, 1
        while rule_id in used:
            suffix += 1
            rule_id = f"{base}-{suffix}"
        used.add(rule_id)
        cells_text = draft.text
        # For table rows the key cells are not part of the "is it only not shown" question.
        judged = cells_text.split(" | ", 1)[1] if " | " in cells_text else cells_text
        rules.append(
            Rule(
                id=rule_id,
                document=doc_key,
                section=draft.section,
                row_label=draft.row_label,
                text=draft.text,
                kind="not_shown" if _not_shown(_strip_headers(judged)) else "rule",
                source=source,
                line=draft.line,
            )
        )
    return rules


def _strip_headers(text: str) -> str:
    """``"Notes: x | Type: y"`` -> ``"x; y"`` so header names do not count as content."""
    parts = []
    for part in text.split(" | "):
        name, sep, value = part.partition(": ")
        parts.append(value if sep and len(name.split()) <= 3 else part)
    return "; ".join(parts)


def iter_spec_files(spec_dir: Path) -> Iterator[tuple[str, Path]]:
    for name, key in DOCUMENTS.items():
        path = spec_dir / name
        if not path.is_file():
            raise FileNotFoundError(f"spec document missing: {path}")
        yield key, path


def parse_rules(spec_dir: Path | str | None = None) -> list[Rule]:
    """All rules of the three documents in document order (rfq, ramp, v1)."""
    directory = Path(spec_dir) if spec_dir is not None else default_spec_dir()
    rules: list[Rule] = []
    for key, path in iter_spec_files(directory):
        rules.extend(parse_document(key, path.read_text(encoding="utf-8"), source=path.name))
    return rules


@functools.cache
def _load(directory: str) -> tuple[Rule, ...]:
    return tuple(parse_rules(directory))


def load_rules(spec_dir: Path | str | None = None) -> tuple[Rule, ...]:
    """Cached :func:`parse_rules`."""
    directory = Path(spec_dir) if spec_dir is not None else default_spec_dir()
    return _load(str(directory.resolve()))


def rules_by_id(spec_dir: Path | str | None = None) -> dict[str, Rule]:
    return {rule.id: rule for rule in load_rules(spec_dir)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.rules", description="List the spec rules and their ids."
    )
    parser.add_argument("--doc", choices=sorted(set(DOCUMENTS.values())), help="one document only")
    parser.add_argument("--spec-dir", type=Path, default=None, help="default: docs/spec")
    parser.add_argument("--kind", choices=("rule", "not_shown"), help="only rules of this kind")
    args = parser.parse_args(argv)
    shown = 0
    for rule in load_rules(args.spec_dir):
        if (args.doc and rule.document != args.doc) or (args.kind and rule.kind != args.kind):
            continue
        marker = " [not shown]" if rule.kind == "not_shown" else ""
        summary = " ".join(rule.text.split())[:80]
        sys.stdout.write(f"{rule.id}{marker}\n    {summary}\n")
        shown += 1
    sys.stdout.write(f"{shown} rules\n")
    return 0
