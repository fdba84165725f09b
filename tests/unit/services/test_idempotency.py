"""The Idempotency-Key store's rules (services/shared/idempotency.py) on a clock the test
moves: claims, the key in flight, the stored answer and its 24 h, release, eviction, what makes
two requests the same and which answers are kept."""

from __future__ import annotations

import pytest

from simulator.clock import Clock
from simulator.services.shared.idempotency import (
    IdempotencyScope,
    IdempotencyStore,
    StoredResponse,
    is_stored,
    is_valid_key,
    request_fingerprint,
)

DAY = 86_400.0


class ManualClock(Clock):
    def __init__(self) -> None:
        super().__init__()
        self.at = 1_000_000.0

    def time(self) -> float:
        return self.at


def scope(key: str = "k1", caller: str = "key:tx_test_000000000001") -> IdempotencyScope:
    return IdempotencyScope(caller=caller, method="POST", path="/v1/webhooks", key=key)


def answer(status: int = 201, body: bytes = b'{"data":{}}') -> StoredResponse:
    return StoredResponse(status, (("Content-Type", "application/json"),), body, "req_1")


def test_first_request_claims_and_a_second_sees_it_in_flight_then_finished() -> None:
    store = IdempotencyStore(ManualClock())
    claimed, record = store.begin(scope())
    assert claimed
    assert record.in_flight
    again, same = store.begin(scope())
    assert (again, same) == (False, record)
    assert same.in_flight
    store.finish(record, answer())
    store.release(record)  # a no-op once finished
    claimed_later, stored = store.begin(scope())
    assert not claimed_later
    assert stored.response == answer()


def test_scope_is_caller_method_path_and_key() -> None:
    store = IdempotencyStore(ManualClock())
    assert store.begin(scope())[0]
    assert store.begin(scope(key="k2"))[0]
    assert store.begin(scope(caller="key:tx_test_000000000002"))[0]
    other_path = IdempotencyScope("key:tx_test_000000000001", "POST", "/v1/swaps", "k1")
    assert store.begin(other_path)[0]
    assert not store.begin(scope())[0]


def test_released_key_is_free_again() -> None:
    store = IdempotencyStore(ManualClock())
    _, record = store.begin(scope())
    store.release(record)
    claimed, fresh = store.begin(scope())
    assert claimed
    assert fresh is not record
    assert store.records() == [fresh]


def test_answer_is_kept_for_the_ttl_on_the_simulator_clock() -> None:
    clock = ManualClock()
    store = IdempotencyStore(clock, ttl_s=DAY)
    _, record = store.begin(scope())
    store.finish(record, answer())
    assert store.expires_at(record) == clock.at + DAY
    clock.at += DAY - 0.001
    assert store.begin(scope()) == (False, record)
    clock.at += 0.001
    claimed, fresh = store.begin(scope())
    assert claimed
    assert fresh is not record
    store.finish(record, answer(status=200))  # the expired record cannot come back
    assert store.records() == [fresh]
    assert fresh.response is None


def test_eviction_drops_the_oldest_finished_records_first() -> None:
    store = IdempotencyStore(ManualClock(), max_records=2)
    _, first = store.begin(scope("a"))
    store.finish(first, answer())
    _, second = store.begin(scope("b"))
    _, third = store.begin(scope("c"))
    assert store.records() == [second, third]
    # In-flight records at the front are kept: their requests are still being answered.
    _, fourth = store.begin(scope("d"))
    assert store.records() == [second, third, fourth]


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
