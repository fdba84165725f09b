"""How spec text becomes the parts of a rule id, and how a markdown line splits into them: the
parser of :mod:`conformance.rules.parser` builds every key from ``slugify`` (lowercase
``[a-z0-9_]`` runs joined by ``-``), ``clip`` (at most 60 characters, cut at a ``-``),
``cell_slug`` (a table cell or label without its parenthetical), ``first_words_slug`` (the first
four words that are not stopwords, for sentences and bullets) and ``singular`` (the prefix of
numbered items under a label), and splits what it reads with ``split_cells`` (a pipe-table row,
pipes inside backticks kept), ``sentences`` (a prose paragraph), ``split_label``
(``"Label: rest"``) and ``is_label_only`` (``"Rules:"``, a line that only introduces what
follows). ``docs/conformance.md`` describes the id scheme in full.
"""

from __future__ import annotations

import re

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

_PARENTHETICAL = re.compile(r"\s*\([^)]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z`(])")
_WORD = re.compile(r"[A-Za-z0-9_]+(?:[-.'][A-Za-z0-9_]+)*")


def slugify(text: str) -> str:
    """Lowercase, ``[a-z0-9_]`` runs joined by ``-`` (``404 not_found`` -> ``404-not_found``)."""
    text = text.replace("`", "").replace("'", "").lower()
    return re.sub(r"[^a-z0-9_]+", "-", text).strip("-")


def clip(slug: str, limit: int = _MAX_CELL_SLUG) -> str:
    if len(slug) <= limit:
        return slug
    cut = slug[:limit]
    return cut.rsplit("-", 1)[0] if "-" in cut else cut


def without_parenthetical(text: str) -> str:
    stripped = _PARENTHETICAL.sub("", text).strip()
    return stripped or text


def cell_slug(cell: str) -> str:
    return clip(slugify(without_parenthetical(cell)))


def first_words_slug(text: str) -> str:
    words = [w for w in _WORD.findall(text.replace("`", "")) if w.lower() not in _STOPWORDS]
    return clip(slugify("-".join(words[:_FIRST_WORDS]))) or "text"


def split_label(text: str) -> tuple[str | None, str]:
    """``"Label: rest"`` -> ``("Label", "rest")`` when the label is short plain prose."""
    head, sep, rest = text.partition(":")
    if not sep or "`" in head:
        return None, text
    label = head.strip()
    if not label or len(without_parenthetical(label).split()) > _LABEL_MAX_WORDS:
        return None, text
    return label, rest.strip()


def is_label_only(text: str) -> bool:
    """A line such as ``quote fields:`` or ``Rules:`` that introduces what follows."""
    return text.endswith(":") and len(text.split()) <= 8 and "`" not in text


def singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def split_cells(line: str) -> list[str]:
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


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
