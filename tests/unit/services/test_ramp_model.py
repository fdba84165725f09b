"""The transfer state machine (RA15-RA17), amounts (RA12) and drift maths (RA14), with no I/O."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from simulator.services.ramp.model import (
    EDGES,
    FORWARD,
    PROVIDER_STATUS_MAP,
    SETTLED,
    STATUSES,
    AmountError,
    TransferRecord,
    TransferStatus,
    can_move,
    drift,
    drifted,
    expire,
    observe,
    parse_amount,
)
from simulator.services.ramp.ports import ProviderTransfer

BASE = ProviderTransfer(
    id="ptr_1",
    reference="rtr_1",
    side="buy",
    chain_id=97,
    sandbox=True,
    fiat="NGN",
    token="NGNS",
    source_amount="10000.00",
    target_amount="9850.000000",
    rate_label="1 NGN = 0.995 NGNS",
    fee_label="1% + 100 NGN",
    status="awaiting_funds",
    status_history=(),
    pay_in={"type": "temporary_bank_account"},
    pay_out={"type": "address", "network": "bnb-testnet", "address": "0xabc"},
    customer_id="cus_1",
    recipient_id=None,
    retry_of=None,
    expires_at=1800.0,
    created_at=0.0,
    updated_at=0.0,
)


def record(
    status: TransferStatus = "AWAITING_FUNDS", word: str = "awaiting_funds"
) -> TransferRecord:
    rec = TransferRecord(
        id="rtr_1",
        provider="ngnramp",
        provider_transfer_id="ptr_1",
        sandbox=True,
        side="buy",
        fiat="NGN",
        token="NGNS",
        chain_id=97,
        wallet="0xabc",
        intent_key="intent-key-0001",
        source_amount="10000.00",
        target_amount="9850.000000",
        rate_label="",
        fee_label="",
        status=status,
        provider_status=word,
        pay_in={},
        pay_out={"type": "address"},
        email=None,
        customer_id="cus_1",
        recipient_id=None,
        expires_at=1800.0,
        created_at=0.0,
        state_at=0.0,
    )
    rec.record_timeline(0.0)
    return rec


def seen(word: str, **changes: object) -> ProviderTransfer:
    return replace(BASE, status=word, **changes)  # type: ignore[arg-type]


# The whole table: from each status, the provider word that maps to each status, allowed or not.
ALLOWED: dict[TransferStatus, set[TransferStatus]] = {
    "AWAITING_FUNDS": {"PROCESSING", "SENDING", "COMPLETED", "FAILED", "REFUNDED", "CANCELLED"},
    "PROCESSING": {"SENDING", "COMPLETED", "FAILED", "REFUNDED", "CANCELLED"},
    "SENDING": {"COMPLETED", "FAILED", "REFUNDED"},
    "FAILED": {"REFUNDED"},
    "EXPIRED": {"COMPLETED", "FAILED", "REFUNDED"},
    "COMPLETED": set(),
    "REFUNDED": set(),
    "CANCELLED": set(),
}


def test_forward_table_is_the_transitive_closure_without_expired() -> None:
    assert {s: set(v) for s, v in FORWARD.items()} == ALLOWED
    for status in SETTLED:
        assert EDGES[status] == frozenset()
    assert "EXPIRED" in EDGES["AWAITING_FUNDS"]
    assert all("EXPIRED" not in targets for targets in FORWARD.values())


@pytest.mark.parametrize("start", STATUSES)
@pytest.mark.parametrize("target", STATUSES)
def test_can_move_matches_the_table(start: TransferStatus, target: TransferStatus) -> None:
    assert can_move(start, target) == (target in ALLOWED[start])


@pytest.mark.parametrize(
    ("start", "word", "expected"),
    [
        ("AWAITING_FUNDS", "funds_received", "PROCESSING"),
        ("PROCESSING", "funds_converted", "SENDING"),
        ("SENDING", "completed", "COMPLETED"),
        ("FAILED", "refunded", "REFUNDED"),
        ("AWAITING_FUNDS", "completed", "COMPLETED"),  # lost webhooks: a jump forward
        ("AWAITING_FUNDS", "cancelled", "CANCELLED"),
        ("PROCESSING", "failed", "FAILED"),
        ("EXPIRED", "completed", "COMPLETED"),
        ("EXPIRED", "refunded", "REFUNDED"),
    ],
)
def test_provider_words_move_forward(start: TransferStatus, word: str, expected: str) -> None:
    rec = record(start, "awaiting_funds" if start in ("AWAITING_FUNDS", "EXPIRED") else "x")
    rec.provider_status = {
        "PROCESSING": "funds_received",
        "SENDING": "funds_converted",
        "FAILED": "failed",
    }.get(start, rec.provider_status)
    result = observe(rec, seen(word), at=10.0)
    assert result.applied
    assert result.changed
    assert rec.status == expected
    assert rec.provider_status == word
    assert rec.timeline[-1].status == expected
    assert rec.timeline[-1].provider_status == word
    assert rec.timeline[-1].at == 10.0
    assert rec.state_at == 10.0


@pytest.mark.parametrize(
    ("start", "word", "stale"),
    [
        ("PROCESSING", "funds_received", "awaiting_funds"),
        ("SENDING", "outgoing_payment_sent", "funds_converted"),
        ("SENDING", "outgoing_payment_sent", "funds_received"),
        ("FAILED", "failed", "outgoing_payment_sent"),
        ("FAILED", "failed", "completed"),  # a failed transfer is refunded, never completed
        ("SENDING", "funds_converted", "cancelled"),  # cancel only before SENDING (RA16)
        ("EXPIRED", "awaiting_funds", "cancelled"),
    ],
)
def test_backwards_and_forbidden_views_change_nothing(
    start: TransferStatus, word: str, stale: str
) -> None:
    rec = record(start, word)
    before = (rec.status, rec.provider_status, len(rec.timeline), rec.state_at)
    result = observe(rec, seen(stale), at=50.0)
    assert not result.applied
    assert (rec.status, rec.provider_status, len(rec.timeline), rec.state_at) == before


@pytest.mark.parametrize("settled", sorted(SETTLED))
@pytest.mark.parametrize("word", sorted(PROVIDER_STATUS_MAP))
def test_settled_never_changes(settled: TransferStatus, word: str) -> None:
    rec = record(settled, {"COMPLETED": "completed", "REFUNDED": "refunded"}.get(settled, "x"))
    rec.pay_out = {"type": "address", "blockchain_hash": "0x01"}
    result = observe(rec, seen(word, pay_out={"type": "address"}), at=99.0)
    assert not result.applied
    assert rec.status == settled
    assert rec.pay_out == {"type": "address", "blockchain_hash": "0x01"}
    assert len(rec.timeline) == 1


def test_same_word_confirms_without_a_timeline_entry() -> None:
    rec = record()
    result = observe(rec, seen("awaiting_funds"), at=20.0)
    assert result.applied
    assert not result.changed
    assert rec.state_at == 20.0
    assert len(rec.timeline) == 1


def test_provider_word_moves_within_a_status() -> None:
    rec = record("SENDING", "funds_converted")
    assert observe(rec, seen("outgoing_payment_sent"), at=5.0).changed
    assert rec.status == "SENDING"
    assert [e.provider_status for e in rec.timeline] == ["funds_converted", "outgoing_payment_sent"]


def test_unknown_word_is_ignored() -> None:
    rec = record()
    assert not observe(rec, seen("teleported"), at=5.0).applied
    assert rec.status == "AWAITING_FUNDS"


def test_expired_tracks_intermediate_words_then_completes_with_hash() -> None:
    rec = record()
    assert expire(rec, at=2400.0)
    assert rec.status == "EXPIRED"
    observe(rec, seen("funds_received"), at=2500.0)
    assert (rec.status, rec.provider_status) == ("EXPIRED", "funds_received")
    observe(rec, seen("funds_converted"), at=2505.0)
    assert (rec.status, rec.provider_status) == ("EXPIRED", "funds_converted")
    pay_out = {"type": "address", "network": "bnb-testnet", "address": "0xabc"}
    done = observe(rec, seen("completed", pay_out={**pay_out, "blockchain_hash": "0xfeed"}), 2520.0)
    assert done.changed
    assert done.previous_status == "EXPIRED"
    assert rec.pay_out["blockchain_hash"] == "0xfeed"
    assert [(e.status, e.provider_status) for e in rec.timeline] == [
        ("AWAITING_FUNDS", "awaiting_funds"),
        ("EXPIRED", "awaiting_funds"),
        ("EXPIRED", "funds_received"),
        ("EXPIRED", "funds_converted"),
        ("COMPLETED", "completed"),
    ]


def test_expire_only_when_nothing_was_received() -> None:
    rec = record("PROCESSING", "funds_received")
    assert not expire(rec, at=1.0)
    rec = record("EXPIRED", "awaiting_funds")
    assert not expire(rec, at=1.0)


def test_stuck_since_is_the_first_funds_converted_entry() -> None:
    rec = record("PROCESSING", "funds_received")
    assert rec.stuck_since() is None
    observe(rec, seen("funds_converted"), at=100.0)
    observe(rec, seen("funds_converted"), at=200.0)
    assert rec.stuck_since() == 100.0
    observe(rec, seen("outgoing_payment_sent"), at=300.0)
    assert rec.stuck_since() is None


@pytest.mark.parametrize(
    ("value", "decimals", "expected"),
    [("1", 2, Decimal(1)), ("1500.50", 2, Decimal("1500.50")), ("0.000001", 6, Decimal("1e-6"))],
)
def test_amounts_accepted(value: str, decimals: int, expected: Decimal) -> None:
    assert parse_amount(value, decimals) == expected


@pytest.mark.parametrize(
    ("value", "decimals", "fragment"),
    [
        ("0", 2, "greater than zero"),
        ("0.00", 2, "greater than zero"),
        ("-5", 2, "decimal string"),
        ("01", 2, "decimal string"),
        ("1.", 2, "decimal string"),
        (".5", 2, "decimal string"),
        ("1e3", 2, "decimal string"),
        ("1,000", 2, "decimal string"),
        ("١٢", 2, "decimal string"),  # non-ASCII digits
        ("1.001", 2, "at most 2"),
        ("1.0000001", 6, "at most 6"),
        (" 1", 2, "decimal string"),
    ],
)
def test_amounts_refused(value: str, decimals: int, fragment: str) -> None:
    with pytest.raises(AmountError, match=fragment):
        parse_amount(value, decimals)


def test_drift_maths() -> None:
    expected = Decimal("9850")
    assert drift(expected, Decimal("9850")) == 0
    assert not drifted(expected, Decimal("9948.5"))  # exactly +1 %: inside
    assert not drifted(expected, Decimal("9751.5"))  # exactly -1 %: inside
    assert drifted(expected, Decimal("9948.51"))
    assert drifted(expected, Decimal("9751.49"))
    assert drift(Decimal("100"), Decimal("97")) == Decimal("0.03")
