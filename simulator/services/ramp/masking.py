"""The three views of a transfer (spec 2-ramp-v2 "Masked views"; RA20, RA21).

- full: with the claim token; everything, the payout account number whole;
- wallet: `GET ?wallet=` and the list (no signature); the payout account number cut to its last
  four digits, nothing else hidden;
- support: the support lookup (the reference is the credential); account numbers as
  `******1234`, account names as initials (`J*** D***`), the temporary bank account likewise;
  amounts, statuses, ids, references, on-chain addresses and hashes in full. No view carries the
  email address itself, only `hasEmail`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Literal

from simulator.services.ramp.model import TimelineEntry, TransferRecord, TransferStatus
from simulator.services.ramp.ports import Side

ViewKind = Literal["full", "wallet", "support"]


@dataclass(frozen=True)
class TransferView:
    """The spec's Transfer resource, as one of the three views."""

    id: str
    provider_transfer_id: str
    provider: str
    sandbox: bool
    side: Side
    fiat: str
    token: str
    chain_id: int
    source_amount: str
    target_amount: str
    rate_label: str
    fee_label: str
    status: TransferStatus
    provider_status: str
    retry_of_id: str | None
    pay_in: dict[str, Any]
    pay_out: dict[str, Any]
    has_email: bool
    timeline: tuple[TimelineEntry, ...]
    expires_at: float
    created_at: float


def _pay_out(record: TransferRecord) -> dict[str, Any]:
    """RA65: a buy's payout hash is shown once COMPLETED (the provider knows it as soon as the
    payout is broadcast; the spec shows it "once COMPLETED")."""
    pay_out = copy.deepcopy(record.pay_out)
    if record.status != "COMPLETED":
        pay_out.pop("blockchain_hash", None)
    return pay_out


def full_view(record: TransferRecord) -> TransferView:
    return TransferView(
        id=record.id,
        provider_transfer_id=record.provider_transfer_id,
        provider=record.provider,
        sandbox=record.sandbox,
        side=record.side,
        fiat=record.fiat,
        token=record.token,
        chain_id=record.chain_id,
        source_amount=record.source_amount,
        target_amount=record.target_amount,
        rate_label=record.rate_label,
        fee_label=record.fee_label,
        status=record.status,
        provider_status=record.provider_status,
        retry_of_id=record.retry_of_id,
        pay_in=copy.deepcopy(record.pay_in),
        pay_out=_pay_out(record),
        has_email=record.has_email,
        timeline=tuple(record.timeline),
        expires_at=record.expires_at,
        created_at=record.created_at,
    )


def last_four(number: str) -> str:
    """The wallet view's account number: its last four digits only."""
    return number[-4:]


def mask_number(number: str) -> str:
    """Support view: `******1234` (at most the last four digits shown, never the whole number)."""
    shown = number[-4:] if len(number) > 4 else ""
    return "*" * 6 + shown


def mask_name(name: str) -> str:
    """Support view: the first letter of each word, then `***` (`Jane Doe` -> `J*** D***`)."""
    return " ".join(word[0] + "***" for word in name.split() if word)


def wallet_view(record: TransferRecord) -> TransferView:
    view = full_view(record)
    pay_out = dict(view.pay_out)
    if isinstance(pay_out.get("accountNumber"), str):
        pay_out["accountNumber"] = last_four(pay_out["accountNumber"])
    return replace(view, pay_out=pay_out)


def support_view(record: TransferRecord) -> TransferView:
    view = full_view(record)
    pay_out = dict(view.pay_out)
    if isinstance(pay_out.get("accountNumber"), str):
        pay_out["accountNumber"] = mask_number(pay_out["accountNumber"])
    if isinstance(pay_out.get("accountName"), str):
        pay_out["accountName"] = mask_name(pay_out["accountName"])
    pay_in = copy.deepcopy(view.pay_in)
    details = pay_in.get("recipient_details")
    if isinstance(details, dict):
        if isinstance(details.get("account_number"), str):
            details["account_number"] = mask_number(details["account_number"])
        if isinstance(details.get("account_name"), str):
            details["account_name"] = mask_name(details["account_name"])
    return replace(view, pay_in=pay_in, pay_out=pay_out)


def view_of(record: TransferRecord, kind: ViewKind) -> TransferView:
    if kind == "full":
        return full_view(record)
    if kind == "wallet":
        return wallet_view(record)
    return support_view(record)
