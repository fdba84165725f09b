"""The markdown reader behind the rule list: :class:`Parser` walks one spec document line by
line and turns every normative statement into a :class:`Draft` (section path, key, section
title, row label, text, line). Only what follows the first ``##`` heading counts; table rows,
numbered and bulleted list items and prose sentences are statements, while labels such as
``Rules:`` or ``quote fields:`` only name what follows them (a path segment, or the prefix of
numbered keys). Error, transition and endpoint tables are keyed by their first two cells, other
tables by the first; repeated transition keys get ``-to-<state>``. :mod:`conformance.rules`
makes the drafts into rules with unique ids; the key helpers are in
:mod:`conformance.rules.text`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.rules.text import (
    cell_slug,
    clip,
    first_words_slug,
    is_label_only,
    sentences,
    singular,
    slugify,
    split_cells,
    split_label,
    without_parenthetical,
)

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

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_NUMBERED = re.compile(r"^(\s*)(\d+)\.\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*]\s+(.*)$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_SEPARATOR_CELL = re.compile(r"^:?-{3,}:?$")


@dataclass
class Draft:
    """One statement as read, before :mod:`conformance.rules` makes its id unique."""

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
class Parser:
    """Reads one document's lines; :meth:`parse` returns its drafts in document order."""

    doc_key: str
    lines: Sequence[str]
    drafts: list[Draft] = field(default_factory=list)
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
    def parse(self) -> list[Draft]:
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
                    name = without_parenthetical(title).lower()
                    self.h2_slug = SECTION_NAMES.get(name, slugify(name))
                    self.h3_slug = ""
                elif level >= 3 and in_body:
                    self.h3 = title
                    self.h3_slug = clip(slugify(without_parenthetical(title)))
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
        if is_label_only(text):
            self.pending_label = text[:-1].strip()
            return
        self.pending_label = None
        for position, sentence in enumerate(sentences(text)):
            label, _rest = split_label(sentence)
            if position == 0 and label:
                key, row_label = cell_slug(label), label
            else:
                key, row_label = first_words_slug(sentence), " ".join(sentence.split()[:6])
            self.drafts.append(
                Draft(
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
            words = without_parenthetical(label_context).split()
            prefix = singular(slugify(words[0])) if words else "item"
        path = self._section_path()
        extra_titles: list[str] = []
        if top_level and label_context and number is None:
            # A labelled bullet list: the label becomes a path segment.
            path += (cell_slug(label_context),)
            extra_titles.append(label_context)
        path += self._list_segments()
        if is_label_only(text):
            label = text[:-1].strip()
            self.list_stack.append(_ListLevel(indent, cell_slug(label), prefix))
            self.last_was_label_item = True
            return
        item_label, _rest = split_label(text)
        if item_label:
            key, row_label = cell_slug(item_label), item_label
        elif number is not None:
            key, row_label = f"{prefix}-{number}", f"{number}."
        else:
            key, row_label = first_words_slug(text), " ".join(text.split()[:6])
        parents = [lvl.segment for lvl in self.list_stack if lvl.segment]
        self.drafts.append(
            Draft(
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
        header = split_cells(rows[0])
        body = [
            (index + offset, split_cells(row))
            for offset, row in enumerate(rows[1:], start=1)
            if not all(_SEPARATOR_CELL.match(c) for c in split_cells(row) if c)
        ]
        path = self._section_path()
        titles: list[str] = []
        if self.pending_label:
            path += (cell_slug(self.pending_label),)
            titles.append(self.pending_label)
        elif self.last_was_label_item:
            path += self._list_segments()
        lowered = [h.lower() for h in header]
        is_errors = bool(lowered) and lowered[0] == "http"
        is_transitions = lowered[:2] == ["from", "trigger"]
        is_endpoints = lowered[:2] == ["method", "path"]
        to_column = lowered.index("to") if "to" in lowered else None
        drafts: list[Draft] = []
        for line_index, cells in body:
            cells = cells + [""] * (len(header) - len(cells))
            if (is_errors or is_transitions) and len(cells) > 1:
                key_cells = cells[:2]
            elif is_endpoints and len(cells) > 1:
                # Method and path without the query string: "get-v2-rfq-levels".
                key_cells = [cells[0], cells[1].split("?", 1)[0]]
            else:
                key_cells = cells[:1]
            key = "-".join(cell_slug(c) for c in key_cells) or "row"
            hint = ""
            if is_transitions and to_column is not None:
                hint = "to-" + cell_slug(cells[to_column])
            text = " | ".join(
                f"{name}: {cell}" if name else cell
                for name, cell in zip(header, cells, strict=False)
                if cell
            )
            drafts.append(
                Draft(
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
