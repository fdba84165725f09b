"""What the provider API does: customers, reviews, quotes, recipients, transfers and payout
retries, with the documented test values. Handlers in api.py parse and render around these."""

from __future__ import annotations

from decimal import Decimal

from eth_account import Account
from eth_utils.address import is_address, to_checksum_address

from provider_sandbox import banks, kyc
from provider_sandbox.chain import ChainUnavailable
from provider_sandbox.core import Sandbox
from provider_sandbox.errors import (
    SandboxConflict,
    SandboxInvalid,
    SandboxNotFound,
    SandboxRefused,
    SandboxUnavailable,
)
from provider_sandbox.rates import price, source_places
from provider_sandbox.schemas import CustomerIn, CustomerPatch, QuoteIn, RecipientIn, TransferIn
from provider_sandbox.state import (
    SandboxCustomer,
    SandboxQuote,
    SandboxRecipient,
    SandboxTransfer,
    StatusEntry,
)
from provider_sandbox.views import transfer_view

REFUSED_PERSON = "We cannot onboard this person"
BLOCKED_PERSON = "This customer is not allowed to transact"
OVER_CAP = "Deposit exceeds the single-deposit limit"
SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def customer(sandbox: Sandbox, customer_id: str) -> SandboxCustomer:
    found = sandbox.state.customers.get(customer_id)
    if found is None:
        raise SandboxNotFound(f"No customer {customer_id}")
    return found


def transfer(sandbox: Sandbox, transfer_id: str) -> SandboxTransfer:
    found = sandbox.state.transfers.get(transfer_id)
    if found is None:
        raise SandboxNotFound(f"No transfer {transfer_id}")
    return found


def checked_address(field: str, value: str) -> str:
    """Lower case or a valid EIP-55 checksum (a mistyped mixed-case address is refused here,
    not when the payout is signed)."""
    if not is_address(value):
        raise SandboxInvalid(f"{field}: not a valid address (checksum mismatch)")
    return str(to_checksum_address(value))


def create_customer(sandbox: Sandbox, body: CustomerIn) -> SandboxCustomer:
    state = sandbox.state
    reference = body.reference.lower()
    existing = state.customer_by_reference(reference)
    if existing is not None:
        raise SandboxConflict(
            f"A customer with reference {reference} exists",
            customer={"id": existing.id, "reference": existing.reference},
        )
    if body.last_name == "Refused":
        raise SandboxRefused(REFUSED_PERSON)
    created = SandboxCustomer(
        id=state.new_id("cus"),
        type=body.type,
        reference=reference,
        first_name=body.first_name or "",
        last_name=body.last_name or "",
        email=body.email or "",
        phone=body.phone or "",
        birth_date=body.birth_date,
        address=body.address,
        created_at=sandbox.clock.time(),
    )
    state.customers[created.id] = created
    return created


def update_customer(sandbox: Sandbox, customer_id: str, body: CustomerPatch) -> SandboxCustomer:
    found = customer(sandbox, customer_id)
    if body.last_name == "Refused":
        raise SandboxRefused(REFUSED_PERSON)
    for name in ("first_name", "last_name", "email", "phone", "birth_date", "address"):
        value = getattr(body, name)
        if value is not None:
            setattr(found, name, value)
    return found


def submit_review(sandbox: Sandbox, found: SandboxCustomer, document_number: str) -> None:
    kyc.submit(found, document_number, sandbox.clock.time(), sandbox.state.settings.review_delay_s)


def check_corridor(sandbox: Sandbox, side: str, chain_id: int, is_sandbox: bool) -> None:
    settings = sandbox.state.settings
    if not settings.enabled:
        raise SandboxUnavailable("The provider is not taking transfers right now")
    if not settings.sides.get(side, False):
        raise SandboxRefused(f"{side.capitalize()}s are not available right now")
    chains = settings.sandbox_chains if is_sandbox else settings.chains
    if chain_id not in chains or sandbox.config.chain(chain_id) is None:
        account = "sandbox" if is_sandbox else "live"
        raise SandboxRefused(f"Chain {chain_id} is not available on the {account} account")


def create_quote(sandbox: Sandbox, body: QuoteIn) -> SandboxQuote:
    config = sandbox.config
    if body.fiat.upper() != config.fiat or body.token.upper() != config.token:
        raise SandboxRefused(f"Only {config.fiat}/{config.token} is offered")
    check_corridor(sandbox, body.side, body.chain_id, body.sandbox)
    source_amount = Decimal(body.amount)
    if source_amount <= 0 or source_amount != source_amount.quantize(source_places(body.side)):
        decimals = 2 if body.side == "buy" else 6
        raise SandboxInvalid(f"amount: a positive amount with at most {decimals} decimals")
    priced = price(body.side, source_amount, sandbox.mid(), config)
    if priced.target_amount <= 0:
        raise SandboxRefused("The amount does not cover the provider's fee")
    state = sandbox.state
    quote = SandboxQuote(
        id=state.new_id("quo"),
        side=body.side,
        chain_id=body.chain_id,
        sandbox=body.sandbox,
        source_amount=source_amount,
        target_amount=priced.target_amount,
        rate=priced.rate,
        fee=priced.fee,
        rate_label=priced.rate_label,
        fee_label=priced.fee_label,
        expires_at=sandbox.clock.time() + config.quote_ttl_s,
    )
    state.quotes[quote.id] = quote
    return quote


def create_recipient(sandbox: Sandbox, body: RecipientIn) -> SandboxRecipient:
    if body.customer_id is not None:
        customer(sandbox, body.customer_id)
    try:
        resolved = banks.resolve_account(body.bank_code, body.account_number)
    except banks.UnknownBank as exc:
        raise SandboxNotFound(str(exc)) from None
    except banks.AccountNotVerified as exc:
        raise SandboxRefused(str(exc)) from None
    if not banks.same_name(resolved, body.account_name):
        raise SandboxRefused("The account name does not match the bank's records")
    state = sandbox.state
    recipient = SandboxRecipient(
        id=state.new_id("rcp"),
        customer_id=body.customer_id,
        bank_code=body.bank_code,
        bank_name=banks.bank_name(body.bank_code),
        account_number=body.account_number,
        account_name=resolved,
    )
    state.recipients[recipient.id] = recipient
    return recipient


def _temporary_account(sandbox: Sandbox, owner: SandboxCustomer) -> dict[str, str]:
    rng = sandbox.state.rng
    number = f"{rng.randrange(10**9, 10**10)}"
    if number.endswith(banks.UNVERIFIABLE_SUFFIX):  # keep it resolvable by the same rules
        number = number[:-1] + "1"
    return {
        "bank_name": banks.TEMPORARY_ACCOUNT_BANK,
        "account_number": number,
        "account_name": f"NGNRAMP CHECKOUT - {owner.first_name} {owner.last_name}".upper(),
    }


async def create_transfer(sandbox: Sandbox, body: TransferIn) -> SandboxTransfer:
    state = sandbox.state
    existing = state.transfer_by_reference(body.reference)
    if existing is not None:
        raise SandboxConflict(
            f"A transfer with reference {body.reference} exists",
            transfer=transfer_view(existing, state, sandbox.config),
        )
    quote = state.quotes.get(body.quote_id)
    if quote is None:
        raise SandboxNotFound(f"No quote {body.quote_id}")
    if quote.sandbox != body.sandbox:
        raise SandboxInvalid("sandbox: the transfer must use the quote's account")
    check_corridor(sandbox, quote.side, quote.chain_id, quote.sandbox)
    now = sandbox.clock.time()
    if quote.used:
        raise SandboxRefused("This quote has already been used")
    if now >= quote.expires_at:
        raise SandboxRefused("The quote has expired")
    owner = customer(sandbox, body.customer_id) if body.customer_id is not None else None
    if owner is not None and owner.last_name == "Blocked":
        raise SandboxRefused(BLOCKED_PERSON)
    created = SandboxTransfer(
        id=state.new_id("trf"),
        reference=body.reference,
        side=quote.side,
        chain_id=quote.chain_id,
        sandbox=quote.sandbox,
        source_amount=quote.source_amount,
        target_amount=quote.target_amount,
        rate_label=quote.rate_label,
        fee_label=quote.fee_label,
        customer_id=body.customer_id,
        recipient_id=None,
        retry_of=None,
        created_at=now,
        expires_at=now + sandbox.config.payment_window_s,
        updated_at=now,
    )
    if quote.side == "buy":
        _prepare_buy(sandbox, body, quote, owner, created)
    else:
        await _prepare_sell(sandbox, body, owner, created)
    quote.used = True
    created.history.append(StatusEntry("awaiting_funds", now))
    state.transfers[created.id] = created
    return created


def _prepare_buy(
    sandbox: Sandbox,
    body: TransferIn,
    quote: SandboxQuote,
    owner: SandboxCustomer | None,
    created: SandboxTransfer,
) -> None:
    if owner is None:
        raise SandboxInvalid("customerId: a buy needs a customer")
    if owner.type == "business":
        raise SandboxRefused("Business profiles cannot buy")
    if body.destination is None:
        raise SandboxInvalid("destination: a buy needs a destination wallet")
    if body.destination.chain_id != quote.chain_id:
        raise SandboxInvalid("destination.chainId: must be the quote's chain")
    if not kyc.can_deposit(owner, sandbox.clock.time()):
        raise SandboxRefused("This customer cannot make deposits until verification is complete")
    if quote.source_amount > sandbox.state.settings.max_buy:
        raise SandboxRefused(OVER_CAP)
    created.destination = checked_address("destination.address", body.destination.address)
    created.bank_account = _temporary_account(sandbox, owner)


async def _prepare_sell(
    sandbox: Sandbox, body: TransferIn, owner: SandboxCustomer | None, created: SandboxTransfer
) -> None:
    state = sandbox.state
    if owner is None and not state.settings.business_profile_sells:
        raise SandboxRefused("Sells need a personal customer profile")
    if body.recipient_id is None:
        raise SandboxInvalid("recipientId: a sell needs a payout recipient")
    recipient = state.recipients.get(body.recipient_id)
    if recipient is None:
        raise SandboxNotFound(f"No recipient {body.recipient_id}")
    if body.refund_address is None:
        raise SandboxInvalid("refundAddress: a sell needs a refund address")
    access = sandbox.engine.chain(created.chain_id)
    key = state.rng.randrange(1, SECP256K1_ORDER)
    account = Account.from_key(key.to_bytes(32, "big"))
    try:
        (baseline,) = await access.balances([account.address])
    except ChainUnavailable as exc:
        raise SandboxUnavailable(f"The provider cannot reach chain {created.chain_id}") from exc
    created.recipient_id = recipient.id
    created.refund_address = checked_address("refundAddress", body.refund_address)
    created.deposit_address = str(account.address)
    created.deposit_key = "0x" + key.to_bytes(32, "big").hex()
    created.deposit_baseline = baseline


def retry_payout(sandbox: Sandbox, original: SandboxTransfer, reference: str) -> SandboxTransfer:
    state = sandbox.state
    existing = state.transfer_by_reference(reference)
    if existing is not None:
        raise SandboxConflict(
            f"A transfer with reference {reference} exists",
            transfer=transfer_view(existing, state, sandbox.config),
        )
    if original.side != "buy" or original.status != "funds_converted":
        raise SandboxRefused("Only a buy waiting at funds_converted can have its payout retried")
    owner = state.customers.get(original.customer_id or "")
    if owner is None or owner.balance <= 0:
        raise SandboxRefused("There is no balance to pay out")
    amount = owner.balance
    now = sandbox.clock.time()
    retry = SandboxTransfer(
        id=state.new_id("trf"),
        reference=reference,
        side="buy",
        chain_id=original.chain_id,
        sandbox=original.sandbox,
        source_amount=amount,
        target_amount=amount,
        rate_label=f"1 {sandbox.config.token} = 1 {sandbox.config.token}",
        fee_label=f"0 {sandbox.config.token} (payout retry)",
        customer_id=owner.id,
        recipient_id=None,
        retry_of=original.id,
        created_at=now,
        expires_at=now + sandbox.config.payment_window_s,
        updated_at=now,
        status="funds_converted",
        history=[StatusEntry("funds_converted", now)],
        received=amount,
        destination=original.destination,
        next_step_at=now + state.settings.step_delay_s,
    )
    # The whole balance goes out, so every stalled transfer that fed it is now paid by the retry.
    owner.balance = Decimal(0)
    for other in state.transfers.values():
        if other.customer_id == owner.id and other.parked:
            other.parked = Decimal(0)
            other.retried_by = retry.id
    state.transfers[retry.id] = retry
    sandbox.webhooks.emit(retry.id, retry.status, transfer_view(retry, state, sandbox.config))
    return retry
