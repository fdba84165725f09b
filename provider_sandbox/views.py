"""Wire shapes of the provider API (docs/provider-sandbox.md): camelCase fields, ISO times with Z,
amounts as decimal strings with the currency's decimals."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from provider_sandbox.config import SandboxConfig
from provider_sandbox.rates import TOKEN_PLACES, source_places, target_places
from provider_sandbox.state import (
    SandboxCustomer,
    SandboxQuote,
    SandboxRecipient,
    SandboxState,
    SandboxTransfer,
)
from rfqkit.timestamps import isoformat_unix


def amount(value: Decimal, places: Decimal) -> str:
    return f"{value.quantize(places):f}"


def network(config: SandboxConfig, chain_id: int) -> str:
    chain = config.chain(chain_id)
    return chain.network if chain is not None else str(chain_id)


def customer_view(customer: SandboxCustomer) -> dict[str, Any]:
    return {
        "id": customer.id,
        "type": customer.type,
        "reference": customer.reference,
        "firstName": customer.first_name,
        "lastName": customer.last_name,
        "email": customer.email,
        "phone": customer.phone,
        "createdAt": isoformat_unix(customer.created_at),
    }


def quote_view(quote: SandboxQuote, config: SandboxConfig) -> dict[str, Any]:
    return {
        "quoteId": quote.id,
        "side": quote.side,
        "chainId": quote.chain_id,
        "sandbox": quote.sandbox,
        "fiat": config.fiat,
        "token": config.token,
        "sourceAmount": amount(quote.source_amount, source_places(quote.side)),
        "targetAmount": amount(quote.target_amount, target_places(quote.side)),
        "rate": f"{quote.rate:f}",
        "fee": amount(quote.fee, target_places(quote.side)),
        "rateLabel": quote.rate_label,
        "feeLabel": quote.fee_label,
        "expiresAt": isoformat_unix(quote.expires_at),
    }


def recipient_view(recipient: SandboxRecipient) -> dict[str, Any]:
    return {
        "recipientId": recipient.id,
        "customerId": recipient.customer_id,
        "bankCode": recipient.bank_code,
        "bankName": recipient.bank_name,
        "accountNumber": recipient.account_number,
        "accountName": recipient.account_name,
    }


def _pay_in(transfer: SandboxTransfer, config: SandboxConfig) -> dict[str, Any]:
    if transfer.side == "buy":
        if transfer.bank_account is None:  # a payout retry: nothing to pay in
            return {"type": "balance"}
        return {
            "type": "temporary_bank_account",
            "recipient_details": dict(transfer.bank_account),
            "expires_at": isoformat_unix(transfer.expires_at),
        }
    return {
        "type": "address",
        "address": transfer.deposit_address,
        "network": network(config, transfer.chain_id),
    }


def _pay_out(
    transfer: SandboxTransfer, state: SandboxState, config: SandboxConfig
) -> dict[str, Any]:
    if transfer.side == "buy":
        out: dict[str, Any] = {
            "type": "address",
            "network": network(config, transfer.chain_id),
            "address": transfer.destination,
        }
        if transfer.payout_hash is not None:
            out["blockchain_hash"] = transfer.payout_hash
        return out
    recipient = state.recipients.get(transfer.recipient_id or "")
    return {
        "type": "bank_account",
        "bankCode": recipient.bank_code if recipient else None,
        "bankName": recipient.bank_name if recipient else None,
        "accountNumber": recipient.account_number if recipient else None,
        "accountName": recipient.account_name if recipient else None,
    }


def transfer_view(
    transfer: SandboxTransfer, state: SandboxState, config: SandboxConfig
) -> dict[str, Any]:
    src, tgt = source_places(transfer.side), target_places(transfer.side)
    short_by = transfer.source_amount - transfer.received
    refund: dict[str, Any] | None = None
    if transfer.status == "refunded":
        refund = (
            {"type": "address", "address": transfer.refund_address}
            if (transfer.side == "sell")
            else {"type": "bank_account"}
        )
        if transfer.refund_hash is not None:
            refund["blockchain_hash"] = transfer.refund_hash
    return {
        "id": transfer.id,
        "reference": transfer.reference,
        "side": transfer.side,
        "chainId": transfer.chain_id,
        "sandbox": transfer.sandbox,
        "fiat": config.fiat,
        "token": config.token,
        "sourceAmount": amount(transfer.source_amount, src),
        "targetAmount": amount(transfer.target_amount, tgt),
        "rateLabel": transfer.rate_label,
        "feeLabel": transfer.fee_label,
        "status": transfer.status,
        "statusHistory": [
            {"status": e.status, "at": isoformat_unix(e.at)} for e in transfer.history
        ],
        "payIn": _pay_in(transfer, config),
        "payOut": _pay_out(transfer, state, config),
        "customerId": transfer.customer_id,
        "recipientId": transfer.recipient_id,
        "retryOf": transfer.retry_of,
        "amountReceived": amount(transfer.received, src),
        "shortBy": amount(short_by, src)
        if 0 < transfer.received < transfer.source_amount
        else None,
        "late": transfer.late,
        "stalled": transfer.stalled,
        "failureReason": transfer.failure_reason,
        "refund": refund,
        "expiresAt": isoformat_unix(transfer.expires_at),
        "createdAt": isoformat_unix(transfer.created_at),
        "updatedAt": isoformat_unix(transfer.updated_at),
    }


def balance_view(customer: SandboxCustomer, config: SandboxConfig) -> dict[str, Any]:
    return {"available": amount(customer.balance, TOKEN_PLACES), "currency": config.token}


__all__ = [
    "amount",
    "balance_view",
    "customer_view",
    "quote_view",
    "recipient_view",
    "transfer_view",
]
