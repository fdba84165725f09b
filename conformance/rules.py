"""The rule list: every normative line of the three spec documents, with a stable id.

A rule is one table row, one numbered or bulleted list item, or one sentence of a prose
paragraph inside the documents' ``##`` sections (the title and intro above the first ``##``
are scope statements and are skipped). Rule ids are built from the document key, a short
section path and a row key, so they read like an address and survive unrelated edits:

    rfq/errors/404-not_found                      error table row (status + code)
    rfq/resources/rfq-record/status               field table row (first cell)
    rfq/states/quoted-post-v2-rfq-id-cancel       transition row (from + trigger)
    rfq/auth/proof-of-control/rule-2              numbered item under "Rules:"
    rfq/overview/conventions/every-response-carries-x-request-id   bullet (first words)

``docs/conformance.md`` describes the scheme in full. The parser is deliberately small and
tuned to the markdown subset the spec uses (headings, pipe tables, ``1.`` and ``-`` lists,
one-line paragraphs).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# File name prefix -> document key used in rule ids.
DOCUMENTS: dict[str, str] = {
    "1-rfq-v2.md": "rfq",
    "2-ramp-v2.md": "ramp",
    "3-v1-and-rates-feed.md": "v1",
}

# Short names for the documents' second-level sections; unknown ones are slugified.
SECTION_NAMES: dict[str, str] = {
    "what the service does": "overview",
    "resources and their fields": "resources",
    "states and transitions": "states",
    "endpoints": "endpoints",
    "authentication": "auth",
    "events": "events",
    "errors": "errors",
    "limits": "limits",
    "versioning": "versioning",
    "rates feed": "feed",
}

# Words dropped when a key is built from the first words of a sentence or bullet.
_STOPWORDS = frozenset(
    {
        *("a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "from"),
        *("with", "as", "is", "are", "be", "its", "it", "this", "that", "these", "those"),
        *("they", "them", "their", "there", "was", "were", "has", "have", "had", "which"),
        "who",
    }
)
_FIRST_WORDS = 4
_MAX_CELL_SLUG = 60
_LABEL_MAX_WORDS = 4

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_NUMBERED = re.compile(r"^(\s*)(\d+)\.\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*]\s+(.*)$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_SEPARATOR_CELL = re.compile(r"^:?-{3,}:?$")
_PARENTHETICAL = re.compile(r"\s*\([^)]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z`(])")
_WORD = re.compile(r"[A-Za-z0-9_]+(?:[-.'][A-Za-z0-9_]+)*")


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
    return Path(__file__).resolve().parent.parent / "docs" / "spec"


def slugify(text: str) -> str:
    """Lowercase, ``[a-z0-9_]`` runs joined by ``-`` (``404 not_found`` -> ``404-not_found``)."""
    text = text.replace("`", "").replace("'", "").lower()
    return re.sub(r"[^a-z0-9_]+", "-", text).strip("-")


def _clip(slug: str, limit: int = _MAX_CELL_SLUG) -> str:
    if len(slug) <= limit:
        return slug
    cut = slug[:limit]
    return cut.rsplit("-", 1)[0] if "-" in cut else cut


def _without_parenthetical(text: str) -> str:
    stripped = _PARENTHETICAL.sub("", text).strip()
    return stripped or text


def _cell_slug(cell: str) -> str:
    return _clip(slugify(_without_parenthetical(cell)))


def _first_words_slug(text: str) -> str:
    words = [w for w in _WORD.findall(text.replace("`", "")) if w.lower() not in _STOPWORDS]
    return _clip(slugify("-".join(words[:_FIRST_WORDS]))) or "text"


def _split_label(text: str) -> tuple[str | None, str]:
    """``"Label: rest"`` -> ``("Label", "rest")`` when the label is short plain prose."""
    head, sep, rest = text.partition(":")
    if not sep or "`" in head:
        return None, text
    label = head.strip()
    if not label or len(_without_parenthetical(label).split()) > _LABEL_MAX_WORDS:
        return None, text
    return label, rest.strip()


def _is_label_only(text: str) -> bool:
    """A line such as ``quote fields:`` or ``Rules:`` that introduces what follows."""
    return text.endswith(":") and len(text.split()) <= 8 and "`" not in text


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _not_shown(text: str) -> bool:
    """True when every clause of the statement only says that something is not shown."""
    clauses = [c.strip() for c in re.split(r"[.;]\s+|[.;]$", text) if c.strip()]
    return bool(clauses) and all("not shown" in c.lower() for c in clauses)


def _split_cells(line: str) -> list[str]:
    """Split a pipe-table line, leaving pipes inside backticks alone."""
    body = line.strip()
    body = body.removeprefix("|").removesuffix("|")
    cells: list[str] = []
    current: list[str] = []
    in_code = False
    for char in body:
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    cells.append("".join(current).strip())
    return cells


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


@dataclass
class _Draft:
    path: tuple[str, ...]
    key: str
    section: str
    row_label: str
    text: str
    line: int
    collision_hint: str = ""  # appended instead of -2 when a table key repeats


@dataclass
class _ListLevel:
    indent: int
    segment: str | None  # path segment children inherit (label-only items), if any
    prefix: str  # numbered-item key prefix: "item", "rule", "behaviour", ...


@dataclass
class _Parser:
    doc_key: str
    lines: Sequence[str]
    drafts: list[_Draft] = field(default_factory=list)
    h2: str = ""
    h3: str = ""
    h2_slug: str = ""
    h3_slug: str = ""
    pending_label: str | None = None
    pending_label_kind: str | None = None  # "numbered" or "bullet": the list the label opened
    list_stack: list[_ListLevel] = field(default_factory=list)
    last_was_label_item: bool = False

    # -- context -------------------------------------------------------------------------
    def _section_path(self) -> tuple[str, ...]:
        return tuple(s for s in (self.h2_slug, self.h3_slug) if s)

    def _section_title(self, *extra: str) -> str:
        return " > ".join(t for t in (self.h2, self.h3, *extra) if t)

    def _list_segments(self) -> tuple[str, ...]:
        return tuple(level.segment for level in self.list_stack if level.segment)

    def _reset_block_context(self) -> None:
        self.pending_label = None
        self.pending_label_kind = None
        self.list_stack = []
        self.last_was_label_item = False

    # -- driver --------------------------------------------------------------------------
    def parse(self) -> list[_Draft]:
        index = 0
        in_body = False
        while index < len(self.lines):
            raw = self.lines[index]
            heading = _HEADING.match(raw)
            if heading:
                level, title = len(heading.group(1)), heading.group(2)
                if level == 2:
                    in_body = True
                    self.h2, self.h3 = title, ""
                    name = _without_parenthetical(title).lower()
                    self.h2_slug = SECTION_NAMES.get(name, slugify(name))
                    self.h3_slug = ""
                elif level >= 3 and in_body:
                    self.h3 = title
                    self.h3_slug = _clip(slugify(_without_parenthetical(title)))
                self._reset_block_context()
                index += 1
                continue
            if not in_body or not raw.strip():
                index += 1
                continue
            if _TABLE.match(raw):
                end = index
                while end < len(self.lines) and _TABLE.match(self.lines[end]):
                    end += 1
                self._table(index, self.lines[index:end])
                index = end
                continue
            numbered, bullet = _NUMBERED.match(raw), _BULLET.match(raw)
            if numbered:
                self._list_item(index, len(numbered.group(1)), numbered.group(3), numbered.group(2))
            elif bullet:
                self._list_item(index, len(bullet.group(1)), bullet.group(2), None)
            else:
                end = index + 1
                while end < len(self.lines) and self._continues_paragraph(self.lines[end]):
                    end += 1
                text = " ".join(line.strip() for line in self.lines[index:end])
                self._paragraph(index, text)
                index = end
                continue
            index += 1
        return self.drafts

    def _continues_paragraph(self, line: str) -> bool:
        return bool(
            line.strip()
            and not _HEADING.match(line)
            and not _TABLE.match(line)
            and not _NUMBERED.match(line)
            and not _BULLET.match(line)
        )

    # -- blocks --------------------------------------------------------------------------
    def _paragraph(self, index: int, text: str) -> None:
        self.list_stack = []
        self.last_was_label_item = False
        self.pending_label_kind = None
        if _is_label_only(text):
            self.pending_label = text[:-1].strip()
            return
        self.pending_label = None
        for position, sentence in enumerate(_sentences(text)):
            label, _rest = _split_label(sentence)
            if position == 0 and label:
                key, row_label = _cell_slug(label), label
            else:
                key, row_label = _first_words_slug(sentence), " ".join(sentence.split()[:6])
            self.drafts.append(
                _Draft(
                    path=self._section_path(),
                    key=key,
                    section=self._section_title(),
                    row_label=row_label,
                    text=sentence,
                    line=index + 1,
                )
            )

    def _list_item(self, index: int, indent: int, text: str, number: str | None) -> None:
        while self.list_stack and self.list_stack[-1].indent >= indent:
            self.list_stack.pop()
        top_level = not self.list_stack
        kind = "bullet" if number is None else "numbered"
        label_context = self.pending_label if top_level else None
        if label_context and self.pending_label_kind not in (None, kind):
            label_context = None  # a different list after the labelled one
        prefix = self.list_stack[-1].prefix if self.list_stack else "item"
        if top_level and label_context:
            words = _without_parenthetical(label_context).split()
            prefix = _singular(slugify(words[0])) if words else "item"
        path = self._section_path()
        extra_titles: list[str] = []
        if top_level and label_context and number is None:
            # A labelled bullet list: the label becomes a path segment.
            path += (_cell_slug(label_context),)
            extra_titles.append(label_context)
        path += self._list_segments()
        if _is_label_only(text):
            label = text[:-1].strip()
            self.list_stack.append(_ListLevel(indent, _cell_slug(label), prefix))
            self.last_was_label_item = True
            return
        item_label, _rest = _split_label(text)
        if item_label:
            key, row_label = _cell_slug(item_label), item_label
        elif number is not None:
            key, row_label = f"{prefix}-{number}", f"{number}."
        else:
            key, row_label = _first_words_slug(text), " ".join(text.split()[:6])
        parents = [lvl.segment for lvl in self.list_stack if lvl.segment]
        self.drafts.append(
            _Draft(
                path=path,
                key=key,
                section=self._section_title(*extra_titles, *parents),
                row_label=row_label,
                text=text,
                line=index + 1,
            )
        )
        self.list_stack.append(_ListLevel(indent, None, prefix))
        self.last_was_label_item = False
        # Keep a paragraph label alive for the following items of the same list.
        if top_level:
            self.pending_label = label_context
            self.pending_label_kind = kind if label_context else None

    def _table(self, index: int, rows: Sequence[str]) -> None:
        header = _split_cells(rows[0])
        body = [
            (index + offset, _split_cells(row))
            for offset, row in enumerate(rows[1:], start=1)
            if not all(_SEPARATOR_CELL.match(c) for c in _split_cells(row) if c)
        ]
        path = self._section_path()
        titles: list[str] = []
        if self.pending_label:
            path += (_cell_slug(self.pending_label),)
            titles.append(self.pending_label)
        elif self.last_was_label_item:
            path += self._list_segments()
        lowered = [h.lower() for h in header]
        is_errors = bool(lowered) and lowered[0] == "http"
        is_transitions = lowered[:2] == ["from", "trigger"]
        is_endpoints = lowered[:2] == ["method", "path"]
        to_column = lowered.index("to") if "to" in lowered else None
        drafts: list[_Draft] = []
        for line_index, cells in body:
            cells = cells + [""] * (len(header) - len(cells))
            if (is_errors or is_transitions) and len(cells) > 1:
                key_cells = cells[:2]
            elif is_endpoints and len(cells) > 1:
                # Method and path without the query string: "get-v2-rfq-levels".
                key_cells = [cells[0], cells[1].split("?", 1)[0]]
            else:
                key_cells = cells[:1]
            key = "-".join(_cell_slug(c) for c in key_cells) or "row"
            hint = ""
            if is_transitions and to_column is not None:
                hint = "to-" + _cell_slug(cells[to_column])
            text = " | ".join(
                f"{name}: {cell}" if name else cell
                for name, cell in zip(header, cells, strict=False)
                if cell
            )
            drafts.append(
                _Draft(
                    path=path,
                    key=key,
                    section=self._section_title(*titles),
                    row_label=" ".join(key_cells),
                    text=text,
                    line=line_index + 1,
                    collision_hint=hint,
                )
            )
        # Repeated transition keys (same from + trigger) are told apart by their target state.
        counts: dict[str, int] = {}
        for draft in drafts:
            counts[draft.key] = counts.get(draft.key, 0) + 1
        for draft in drafts:
            if counts[draft.key] > 1 and draft.collision_hint:
                draft.key = f"{draft.key}-{draft.collision_hint}"
        self.drafts.extend(drafts)
        self.pending_label = None
        self.pending_label_kind = None
        self.list_stack = []
        self.last_was_label_item = False


def parse_document(doc_key: str, text: str, source: str = "") -> list[Rule]:
    """Rules of one document, ids not yet made unique across documents (they are per doc)."""
    drafts = _Parser(doc_key, text.splitlines()).parse()
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


if __name__ == "__main__":
    raise SystemExit(main())
