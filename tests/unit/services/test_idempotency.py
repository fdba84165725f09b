"""The Idempotency-Key rules of services/shared/idempotency.py that need no store: what makes two
requests the same, the key's syntax and which answers are kept (the store's own contract is
tests/integration/shared_engine/test_idempotency_ledger_contract.py, against both stores)."""

from __future__ import annotations

import pytest

from simulator.services.shared.idempotency import (
    is_stored,
    is_valid_key,
    request_fingerprint,
)

DAY = 86_400.0


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        (b'{"a":1,"b":[1,2]}', b'{ "b": [1, 2], "a": 1 }', True),
        (b'{"a":1}', b'{"a":2}', False),
        (b'{"a":1}', b'{"a":1.0}', False),
        (b"not json", b"not json", True),
        (b"not json", b"not json ", False),
        (b"", b"", True),
    ],
)
def test_fingerprint_compares_json_by_value(first: bytes, second: bytes, same: bool) -> None:
    assert (request_fingerprint("", first) == request_fingerprint("", second)) is same


def test_fingerprint_includes_the_query() -> None:
    assert request_fingerprint("a=1", b"{}") != request_fingerprint("a=2", b"{}")


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("a", True),
        ("order-2026-11-23 #7", True),
        ("x" * 255, True),
        ("", False),
        ("x" * 256, False),
        (" a", False),
        ("a ", False),
        ("é", False),
        ("a\tb", False),
    ],
)
def test_key_syntax(value: str, valid: bool) -> None:
    assert is_valid_key(value) is valid


@pytest.mark.parametrize(
    ("status", "kept"),
    [
        (200, True),
        (201, True),
        (404, True),
        (409, True),
        (400, False),
        (401, False),
        (403, False),
        (413, False),
        (429, False),
        (500, False),
        (502, False),
        (503, False),
    ],
)
def test_which_answers_are_kept(status: int, kept: bool) -> None:
    assert is_stored(status) is kept
