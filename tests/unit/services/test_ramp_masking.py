"""The three transfer views (RA20, RA21)."""

from __future__ import annotations

from simulator.services.ramp.masking import (
    full_view,
    mask_name,
    mask_number,
    support_view,
    view_of,
    wallet_view,
)
from simulator.services.ramp.model import TransferRecord


def sell_record() -> TransferRecord:
    return TransferRecord(
        id="rtr_1",
        provider="ngnramp",
        provider_transfer_id="ptr_1",
        sandbox=True,
        side="sell",
        fiat="NGN",
        token="NGNS",
        chain_id=97,
        wallet="0xabc",
        intent_key="intent-key-0001",
        source_amount="100.000000",
        target_amount="49.25",
        rate_label="1 NGNS = 0.995 NGN",
        fee_label="0.5% + 50 NGN",
        status="AWAITING_FUNDS",
        provider_status="awaiting_funds",
        pay_in={"type": "address", "address": "0xdead", "network": "bnb-testnet"},
        pay_out={
            "type": "bank_account",
            "bankCode": "058",
            "bankName": "GTBank",
            "accountNumber": "0123456789",
            "accountName": "Jane Amaka Doe",
        },
        email="jane@example.com",
        customer_id=None,
        recipient_id="rcp_1",
        expires_at=1800.0,
        created_at=0.0,
        state_at=0.0,
    )


def buy_record() -> TransferRecord:
    rec = sell_record()
    rec.side = "buy"
    rec.pay_in = {
        "type": "temporary_bank_account",
        "recipient_details": {
            "bank_name": "Wema Bank",
            "account_number": "9912345678",
            "account_name": "NGN Ramp Jane Doe",
        },
        "expires_at": "2030-01-01T00:30:00.000Z",
    }
    rec.pay_out = {
        "type": "address",
        "network": "bnb-testnet",
        "address": "0xabc",
        "blockchain_hash": "0xfeed",
    }
    return rec


def test_full_view_shows_everything_and_is_a_copy() -> None:
    rec = sell_record()
    view = full_view(rec)
    assert view.pay_out["accountNumber"] == "0123456789"
    assert view.pay_out["accountName"] == "Jane Amaka Doe"
    assert view.has_email is True
    view.pay_out["accountNumber"] = "x"
    assert rec.pay_out["accountNumber"] == "0123456789"


def test_wallet_view_cuts_only_the_account_number() -> None:
    rec = sell_record()
    view = wallet_view(rec)
    assert view.pay_out["accountNumber"] == "6789"
    assert view.pay_out["accountName"] == "Jane Amaka Doe"
    assert view.pay_in == rec.pay_in
    assert view.source_amount == rec.source_amount
    assert rec.pay_out["accountNumber"] == "0123456789"  # the record is untouched


def test_support_view_hides_numbers_and_names_keeps_the_rest() -> None:
    rec = sell_record()
    view = support_view(rec)
    assert view.pay_out["accountNumber"] == "******6789"
    assert view.pay_out["accountName"] == "J*** A*** D***"
    assert view.pay_out["bankCode"] == "058"
    assert view.pay_in["address"] == "0xdead"
    assert (view.id, view.provider_transfer_id, view.status) == ("rtr_1", "ptr_1", rec.status)
    assert (view.source_amount, view.target_amount) == ("100.000000", "49.25")


def test_support_view_masks_the_temporary_bank_account_and_keeps_the_hash() -> None:
    rec = buy_record()
    # RA65: the payout hash is shown once COMPLETED, in every view.
    for kind in ("full", "wallet", "support"):
        assert "blockchain_hash" not in view_of(rec, kind).pay_out
    rec.status = "COMPLETED"
    view = support_view(rec)
    details = view.pay_in["recipient_details"]
    assert details["account_number"] == "******5678"
    assert details["account_name"] == "N*** R*** J*** D***"
    assert details["bank_name"] == "Wema Bank"
    assert view.pay_out["blockchain_hash"] == "0xfeed"
    assert view.pay_out["address"] == "0xabc"
    assert rec.pay_in["recipient_details"]["account_number"] == "9912345678"
    assert view_of(rec, "wallet").pay_in == rec.pay_in  # wallet view: only payOut is cut


def test_mask_helpers_never_show_a_short_number_whole() -> None:
    assert mask_number("1234") == "******"
    assert mask_number("123456") == "******3456"
    assert mask_name("  ada   lovelace ") == "a*** l***"
