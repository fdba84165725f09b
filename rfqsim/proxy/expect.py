"""The proxy's own small assertions, for the checks the suite writes inline in its tests (a
member in a set, a value equal to another): each fails with what it saw, as the suite's do."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def expect_in(value: Any, allowed: frozenset[str], what: str) -> None:
    assert value in allowed, f"{what} {value!r}, expected one of {sorted(allowed)}"


def expect_all_in(values: Iterable[Any], allowed: frozenset[str], what: str) -> None:
    for value in values:
        expect_in(value, allowed, what)


def expect_equal(value: Any, expected: Any, what: str) -> None:
    assert value == expected, f"{what} {value!r}, expected {expected!r}"


def expect_true(value: bool, what: str) -> None:
    assert value, f"expected: {what}"
