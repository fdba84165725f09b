"""Members of a JSON value wherever they sit, for checks that hold whatever the answer's shape
(the spec leaves many bodies "not shown"): :func:`objects` yields every object in it,
:func:`fields` every member of a given name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def objects(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every object (mapping) anywhere in a JSON value, ``value`` itself included."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            yield node
            stack.extend(item for item in node.values() if isinstance(item, (Mapping, list)))
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (Mapping, list)))


def fields(value: Any, names: frozenset[str]) -> Iterator[tuple[str, Any]]:
    """Every (name, value) of a member named in ``names``, anywhere in a JSON value."""
    for node in objects(value):
        for name, item in node.items():
            if name in names:
                yield name, item
