"""conformance/wire/wording.py `shown`: values as the spec's JSON spells them, never Python's."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.wire.wording import SHOWN_CHARS, shown


@pytest.mark.parametrize(
    ("value", "spelled"),
    [
        (None, "null"),
        (True, "true"),
        ("0xab", '"0xab"'),
        (10_000_000, "10000000"),
        ({"taker": None, "eventTypes": []}, '{"taker": null, "eventTypes": []}'),
        (b'{"error": "x"}', '"{\\"error\\": \\"x\\"}"'),  # bytes that are text: that text
        (b"\x12\x34\xff", "0x1234ff"),  # bytes that are not: their 0x hex
        (b"\x00\x01", "0x0001"),
        ("naira ₦", '"naira ₦"'),
    ],
)
def test_values_are_spelled_in_json(value: Any, spelled: str) -> None:
    assert shown(value) == spelled


def test_a_long_value_is_cut_with_an_ellipsis() -> None:
    said = shown("x" * 1000)
    assert len(said) == SHOWN_CHARS
    assert said.endswith("…")
    assert said.startswith('"xxx')
