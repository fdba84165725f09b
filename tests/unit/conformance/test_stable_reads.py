"""conformance/checks/stable_reads.py `assert_stable`: two reads of one object agree on what the
spec fixes at creation, whatever else moved, and the second shows no secret the spec returns at
creation only; a failure names the object, the field, both values and the pair of reads."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from conformance.checks.assertions import assert_same_creation
from conformance.checks.stable_reads import (
    KINDS,
    MIN_GAP_S,
    REPLAY,
    TWO_READS,
    a_second_later,
    assert_stable,
    row_of,
)
from conformance.rules import rules_by_id

RFQ: dict[str, Any] = {
    "rfqId": "rfq_1",
    "status": "quoted",
    "chainId": 97,
    "sellToken": "0x55d398326f99059fF775485246999027B3197955",
    "buyToken": "0x0000000000000000000000000000000000000001",
    "taker": "0xAbC0000000000000000000000000000000000002",
    "sellAmount": "1000",
    "buyAmount": "1500000",
    "feeAmount": "1",
    "quoteTtlMs": 60000,
    "replyBy": "2026-11-30T10:00:00.750Z",
    "expiresAt": "2026-11-30T10:01:00.000Z",
    "txHash": None,
    "filledAt": None,
    "createdAt": "2026-11-30T10:00:00.000Z",
}
SECRET = "whsec_" + "s3cr3t" * 6
ENDPOINT = {
    "id": "whe_1",
    "url": "https://example.com/hook",
    "eventTypes": ["rfq.filled", "rfq.expired"],
    "status": "active",
}


def failure(kind: str, first: dict[str, Any], again: dict[str, Any], what: Any = TWO_READS) -> str:
    with pytest.raises(AssertionError) as caught:
        assert_stable(kind, str(first.get("rfqId") or first.get("id")), first, again, what=what)
    return str(caught.value)


def test_what_the_spec_lets_change_may_change() -> None:
    filled = {
        **RFQ,
        "status": "filled",
        "txHash": "0x" + "ab" * 32,
        "filledAt": "2026-11-30T10:00:30.000Z",
        "taker": RFQ["taker"].lower(),  # one address, either case
        "createdAt": "2026-11-30T10:00:00Z",  # the same instant in whole seconds
    }
    assert_stable("rfq", "rfq_1", RFQ, filled, what=TWO_READS)


def test_a_moved_creation_time_fails_naming_both_values_and_the_pair() -> None:
    moved = {**RFQ, "createdAt": "2026-11-30T10:00:02.000Z"}
    said = failure("rfq", RFQ, moved, row_of())
    assert said.startswith("RFQ record rfq_1: expected the createdAt first read, ")
    assert "2026-11-30T10:00:00.000Z, got 2026-11-30T10:00:02.000Z (list row vs record)" in said


def test_a_changed_amount_fails() -> None:
    said = failure("rfq", RFQ, {**RFQ, "sellAmount": "999"})
    assert 'expected the sellAmount first read, "1000", got "999" (two reads)' in said
    assert "(two reads)" in failure("rfq", RFQ, {**RFQ, "quoteTtlMs": 59000})


def test_a_field_the_first_read_showed_may_not_go_missing_but_from_a_list_row() -> None:
    bare = {k: v for k, v in RFQ.items() if k != "replyBy"}
    assert "replyBy shown by the first read, missing (two reads)" in failure("rfq", RFQ, bare)
    assert_stable("rfq", "rfq_1", RFQ, bare, what=row_of())
    nameless = {k: v for k, v in RFQ.items() if k != "rfqId"}
    with pytest.raises(AssertionError, match=r"rfqId missing \(list row vs record\)"):
        assert_stable("rfq", "rfq_1", RFQ, nameless, what=row_of())


def test_a_secret_shown_again_fails_without_its_value() -> None:
    created = {**ENDPOINT, "signingSecret": SECRET}
    said = failure("webhook_endpoint", created, {**ENDPOINT, "signingSecret": SECRET})
    assert "webhook endpoint whe_1: signingSecret shown again (two reads)" in said
    assert SECRET not in said
    assert_stable("webhook_endpoint", "whe_1", created, ENDPOINT, what=row_of("creation answer"))
    assert_stable("webhook_endpoint", "whe_1", created, created, what=REPLAY)  # the answer again
    said = failure("rfq", RFQ, {**RFQ, "claimToken": "rfqc_" + "x" * 43})
    assert "claimToken shown again" in said
    assert "rfqc_" not in said


def test_event_types_compare_as_a_set_and_nested_members_by_path() -> None:
    reordered = {**ENDPOINT, "eventTypes": ["rfq.expired", "rfq.filled"]}
    assert_stable("webhook_endpoint", "whe_1", ENDPOINT, reordered, what=TWO_READS)
    transfer = {"id": "rtr_1", "payIn": {"type": "address", "address": "0xAB"}}
    assert_stable(
        "ramp_transfer", "rtr_1", transfer, {**transfer, "status": "PROCESSING"}, what=TWO_READS
    )
    moved = {**transfer, "payIn": {"type": "address", "address": "0xCD"}}
    assert 'payIn.address first read, "0xAB", got "0xCD"' in failure(
        "ramp_transfer", transfer, moved
    )


def test_assert_same_creation_is_the_creation_time_alone() -> None:
    assert_same_creation("rtr_1", "2026-11-30T10:00:00.250Z", "2026-11-30T10:00:00Z")
    with pytest.raises(AssertionError) as caught:
        assert_same_creation("rtr_1", "2026-11-30T10:00:00.250Z", "2026-11-30T10:00:03Z")
    # The watching proxy reports it in these words (tests/unit/proxy/test_checks.py).
    assert "rtr_1: expected the createdAt first read, 2026-11-30T10:00:00.250Z" in str(caught.value)


def test_a_second_later_waits_from_the_first_reads_completion() -> None:
    read_at = time.monotonic()
    pair = a_second_later(read_at, "trade")
    assert time.monotonic() - read_at >= MIN_GAP_S
    waited = re.fullmatch(r"trade read ([0-9.]+) s later", pair.label)
    assert waited, pair
    assert float(waited.group(1)) >= MIN_GAP_S
    long_ago = time.monotonic() - 5
    started = time.monotonic()
    assert a_second_later(long_ago).label.startswith("record read 5.")
    assert time.monotonic() - started < MIN_GAP_S, "no wait once the second has passed"


def test_every_kind_names_rules_of_the_spec() -> None:
    known = rules_by_id()
    for name, kind in KINDS.items():
        assert set(kind.rules) <= set(known), (name, set(kind.rules) - set(known))
