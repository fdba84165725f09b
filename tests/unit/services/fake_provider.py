"""An in-memory `RampProvider` for unit tests of the ramp services: the provider sandbox's test
values and switches (docs/provider-sandbox.md), its review delays on a given clock, API call
counts, an off switch (every call `ProviderUnreachable`) and a hold that keeps calls in flight.

Transfers are kept simple: a quote at a fixed rate (1 NGNS per NGN minus a 1 % fee, shiftable),
transfers created in `awaiting_funds` and moved by `set_status`."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import ROUND_DOWN, Decimal
from typing import Any, Literal

from simulator.clock import Clock
from simulator.services.ramp.ports import (
    Bank,
    Capabilities,
    KycDocument,
    KycReview,
    PersonDetails,
    ProviderBalance,
    ProviderConflict,
    ProviderCustomer,
    ProviderInvalid,
    ProviderNotFound,
    ProviderQuote,
    ProviderRecipient,
    ProviderRefused,
    ProviderTransfer,
    ProviderUnreachable,
    Side,
    StatusChange,
)

BANKS = (Bank("044", "Access Bank"), Bank("058", "Guaranty Trust Bank"), Bank("057", "Zenith"))
REVIEW_DELAY_S = 30.0
MAX_BUY = "5000000"


def default_capabilities(provider_id: str = "ngnramp") -> Capabilities:
    return Capabilities(
        provider=provider_id,
        display_name="NGN Ramp (fake)",
        fiat="NGN",
        token="NGNS",
        chains=(56, 97),
        sandbox_chains=(97,),
        sides=("buy", "sell"),
        enabled=True,
        requires_customer_details=True,
        requires_payout_bank_account=True,
        requires_destination_wallet=True,
        max_buy_amount=MAX_BUY,
        max_buy_currency="NGN",
    )


@dataclass
class FakeCustomer:
    id: str
    reference: str
    details: PersonDetails  # everything the provider was sent (including birth date, address)
    document_number: str | None = None
    submitted_at: float | None = None
    balance: str = "0"


@dataclass
class FakeProvider:
    clock: Clock
    provider_id: str = "ngnramp"
    caps: Capabilities = field(default_factory=default_capabilities)
    down: bool = False  # every call raises ProviderUnreachable
    rate_shift: Decimal = Decimal(0)  # fraction added to the quote's rate
    calls: Counter[str] = field(default_factory=Counter)  # method name -> calls
    customers: dict[str, FakeCustomer] = field(default_factory=dict)
    transfers: dict[str, ProviderTransfer] = field(default_factory=dict)
    recipients: dict[str, ProviderRecipient] = field(default_factory=dict)
    quotes: dict[str, ProviderQuote] = field(default_factory=dict)
    # While set, calls named here wait for `release` (holds a call in flight).
    hold: set[str] = field(default_factory=set)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    _ids: int = 0

    def _next(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}_{self._ids:06d}"

    async def _enter(self, name: str) -> None:
        self.calls[name] += 1
        await asyncio.sleep(0)  # a real await, as over HTTP: lets concurrent callers interleave
        if name in self.hold:
            await self.release.wait()
        if self.down:
            raise ProviderUnreachable("fake provider is down")

    # -- discovery -------------------------------------------------------------------------

    async def capabilities(self) -> Capabilities:
        await self._enter("capabilities")
        return self.caps

    async def banks(self) -> list[Bank]:
        await self._enter("banks")
        return list(BANKS)

    async def resolve_account(self, bank_code: str, account_number: str) -> str:
        await self._enter("resolve_account")
        if bank_code not in {b.code for b in BANKS}:
            raise ProviderNotFound("Unknown bank")
        if account_number.endswith("0000"):
            raise ProviderRefused("We could not verify this bank account")
        return f"HOLDER {account_number[-4:]}"

    # -- customers and KYC --------------------------------------------------------------------

    async def create_customer(
        self, *, reference: str, kind: Literal["individual", "business"], details: PersonDetails
    ) -> ProviderCustomer:
        await self._enter("create_customer")
        if None in (details.first_name, details.last_name, details.email, details.phone):
            raise ProviderInvalid("firstName, lastName, email and phone are required")
        if details.last_name == "Refused":
            raise ProviderRefused("We cannot onboard this person")
        customer = FakeCustomer(self._next("cus"), reference, details)
        self.customers[customer.id] = customer
        return ProviderCustomer(customer.id, kind)

    def _customer(self, customer_id: str) -> FakeCustomer:
        customer = self.customers.get(customer_id)
        if customer is None:
            raise ProviderNotFound("No such customer")
        return customer

    async def update_customer(self, customer_id: str, details: PersonDetails) -> ProviderCustomer:
        await self._enter("update_customer")
        customer = self._customer(customer_id)
        sent = {k: v for k, v in details.__dict__.items() if v is not None}
        customer.details = replace(customer.details, **sent)
        return ProviderCustomer(customer.id, "individual")

    async def submit_kyc(self, customer_id: str, document: KycDocument) -> KycReview:
        await self._enter("submit_kyc")
        customer = self._customer(customer_id)
        customer.document_number = document.number
        customer.submitted_at = self.clock.time()
        return self._review(customer)

    def _review(self, customer: FakeCustomer) -> KycReview:
        number = (customer.document_number or "").upper()
        now = self.clock.time()
        if customer.submitted_at is None:
            status = "not_started"
        elif now < customer.submitted_at + REVIEW_DELAY_S:
            status = "awaiting_review"
        elif number.startswith("REJECT"):
            status = "declined"
        elif number.startswith("EXPIRE") and now >= customer.submitted_at + 2 * REVIEW_DELAY_S:
            status = "expired"
        else:
            status = "approved"
        return KycReview(
            status=status,
            reasons=("Document image is not legible",) if status == "declined" else (),
            requirements_due=("document",) if status == "expired" else (),
            level="tier_1" if status == "approved" else None,
            can_deposit=status == "approved" and not number.startswith("NODEPOSIT"),
            max_buy_amount=self.caps.max_buy_amount,
            max_buy_currency=self.caps.max_buy_currency,
        )

    async def kyc_review(self, customer_id: str, fiat: str) -> KycReview:
        await self._enter("kyc_review")
        return self._review(self._customer(customer_id))

    async def kyc_link(self, customer_id: str) -> str:
        await self._enter("kyc_link")
        return f"http://provider.invalid/verify/{self._customer(customer_id).id}"

    async def balance(self, customer_id: str | None) -> ProviderBalance:
        await self._enter("balance")
        if customer_id is None:
            raise ProviderInvalid("balances exist only for personal profiles")
        return ProviderBalance(self._customer(customer_id).balance, self.caps.token)

    # -- quotes, recipients, transfers --------------------------------------------------------

    async def quote(
        self, *, side: Side, fiat: str, token: str, chain_id: int, amount: str, sandbox: bool
    ) -> ProviderQuote:
        await self._enter("quote")
        rate = Decimal("0.995") + self.rate_shift
        source = Decimal(amount)
        places = Decimal("0.000001") if side == "buy" else Decimal("0.01")
        converted = source * rate
        fee = (converted * Decimal("0.01")).quantize(places, rounding=ROUND_DOWN)
        target = (converted - fee).quantize(places, rounding=ROUND_DOWN)
        quote = ProviderQuote(
            quote_id=self._next("quo"),
            side=side,
            source_amount=amount,
            target_amount=f"{target:f}",
            rate=f"{rate:f}",
            fee=f"{fee:f}",
            rate_label=f"1 {fiat} = {rate:f} {token}",
            fee_label=f"{fee:f}",
            expires_at=self.clock.time() + 60,
        )
        self.quotes[quote.quote_id] = quote
        return quote

    async def create_recipient(
        self, *, customer_id: str | None, bank_code: str, account_number: str, account_name: str
    ) -> ProviderRecipient:
        await self._enter("create_recipient")
        if account_number.endswith("0000"):
            raise ProviderRefused("We could not verify this bank account")
        bank = next((b for b in BANKS if b.code == bank_code), None)
        if bank is None:
            raise ProviderNotFound("Unknown bank")
        recipient = ProviderRecipient(
            self._next("rcp"), bank_code, bank.name, account_number, account_name
        )
        self.recipients[recipient.recipient_id] = recipient
        return recipient

    async def create_transfer(
        self,
        *,
        quote_id: str,
        reference: str,
        customer_id: str | None,
        chain_id: int,
        sandbox: bool,
        destination_address: str | None = None,
        recipient_id: str | None = None,
        refund_address: str | None = None,
    ) -> ProviderTransfer:
        await self._enter("create_transfer")
        existing = next((t for t in self.transfers.values() if t.reference == reference), None)
        if existing is not None:
            raise ProviderConflict("reference already used", existing)
        quote = self.quotes.get(quote_id)
        if quote is None or quote.expires_at < self.clock.time():
            raise ProviderRefused("The quote has expired")
        if quote.side == "buy" and Decimal(quote.source_amount) > Decimal(self.caps.max_buy_amount):
            raise ProviderRefused("Deposit exceeds the single-deposit limit")
        customer = self.customers.get(customer_id) if customer_id else None
        if customer is not None and customer.details.last_name == "Blocked":
            raise ProviderRefused("This customer is not allowed to transact")
        now = self.clock.time()
        transfer = ProviderTransfer(
            id=self._next("ptr"),
            reference=reference,
            side=quote.side,
            chain_id=chain_id,
            sandbox=sandbox,
            fiat=self.caps.fiat,
            token=self.caps.token,
            source_amount=quote.source_amount,
            target_amount=quote.target_amount,
            rate_label=quote.rate_label,
            fee_label=quote.fee_label,
            status="awaiting_funds",
            status_history=(StatusChange("awaiting_funds", now),),
            pay_in={"type": "temporary_bank_account"}
            if quote.side == "buy"
            else {"type": "address", "address": "0x" + "11" * 20, "network": "bnb-testnet"},
            pay_out={"type": "address", "network": "bnb-testnet", "address": destination_address}
            if quote.side == "buy"
            else {"type": "bank_account", "recipientId": recipient_id},
            customer_id=customer_id,
            recipient_id=recipient_id,
            retry_of=None,
            expires_at=now + 1800,
            created_at=now,
            updated_at=now,
        )
        self.transfers[transfer.id] = transfer
        return transfer

    def set_status(self, transfer_id: str, status: str, **changes: Any) -> ProviderTransfer:
        """Move a transfer (test control); returns the new provider view."""
        old = self.transfers[transfer_id]
        now = self.clock.time()
        new = replace(
            old,
            status=status,
            status_history=(*old.status_history, StatusChange(status, now)),
            updated_at=now,
            **changes,
        )
        self.transfers[transfer_id] = new
        return new

    async def transfer(self, transfer_id: str) -> ProviderTransfer:
        await self._enter("transfer")
        found = self.transfers.get(transfer_id)
        if found is None:
            raise ProviderNotFound("No such transfer")
        return found

    async def transfer_by_reference(self, reference: str) -> ProviderTransfer | None:
        await self._enter("transfer_by_reference")
        return next((t for t in self.transfers.values() if t.reference == reference), None)

    async def retry_payout(self, transfer_id: str, *, reference: str) -> ProviderTransfer:
        await self._enter("retry_payout")
        original = self.transfers.get(transfer_id)
        if original is None:
            raise ProviderNotFound("No such transfer")
        now = self.clock.time()
        retry = replace(
            original,
            id=self._next("ptr"),
            reference=reference,
            status="outgoing_payment_sent",
            status_history=(StatusChange("outgoing_payment_sent", now),),
            retry_of=original.id,
            created_at=now,
            updated_at=now,
        )
        self.transfers[retry.id] = retry
        return retry
