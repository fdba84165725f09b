"""The proxy's own small assertions, for the checks the suite writes inline in its tests (a
member in a set, a value equal to another): each fails with what it saw, as the suite's do."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.wire.wording import shown


def expect_in(value: Any, allowed: frozenset[str], what: str) -> None:
    listed = ", ".join(shown(a) for a in sorted(allowed))
    assert value in allowed, f"{what}: expected one of {listed}, got {shown(value)}"


def expect_all_in(values: Iterable[Any], allowed: frozenset[str], what: str) -> None:
    for value in values:
        expect_in(value, allowed, what)


def expect_equal(value: Any, expected: Any, what: str) -> None:
    assert value == expected, f"{what}: expected {shown(expected)}, got {shown(value)}"


def expect_true(value: bool, what: str) -> None:
    assert value, f"expected: {what}"
