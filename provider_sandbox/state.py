"""Everything the sandbox remembers. Plain dataclasses; the modules around them (kyc, transfers,
rates) hold the rules. `/sandbox/reset` replaces the whole `SandboxState`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from provider_sandbox.config import SandboxConfig
from rfqkit.random_state import RandomStream

Side = Literal["buy", "sell"]

# The provider's statuses on the happy path, in order; position = progress.
PROGRESSION = (
    "awaiting_funds",
    "funds_received",
    "funds_converted",
    "outgoing_payment_sent",
    "completed",
)
# A settled transfer never changes again; `failed` is not settled (it may become `refunded`).
SETTLED = frozenset({"completed", "refunded", "cancelled"})
ALL_STATUSES = (*PROGRESSION, "failed", "refunded", "cancelled")


@dataclass
class RuntimeSettings:
    """What the switches, config, webhooks and reachability controls change."""

    enabled: bool  # provider switched on at all (off: 503 unavailable on quotes and transfers)
    sides: dict[str, bool]  # {"buy": bool, "sell": bool}
    chains: list[int]  # live chains advertised and accepted
    sandbox_chains: list[int]  # chains accepted with sandbox: true
    business_profile_sells: bool  # sells without a personal customer allowed
    review_delay_s: float  # clock seconds from KYC submission to outcome
    step_delay_s: float  # clock seconds per status step after pay-in
    max_buy: Decimal  # single-deposit cap, NGN
    api_latency_ms: int  # wall-clock wait before every /api/v1 answer
    webhook_mode: Literal["deliver", "drop", "delay"]  # what happens to outgoing webhooks
    webhook_delay_s: float  # clock seconds a webhook is held in delay mode
    reachable: bool  # False: /api/v1 connections are closed without an answer
    rate_shift: Decimal  # factor on the mid rate from /sandbox/rates/shift (1 = none)

    @classmethod
    def defaults(cls, config: SandboxConfig) -> RuntimeSettings:
        return cls(
            enabled=True,
            sides={"buy": True, "sell": True},
            chains=config.default_live_chains(),
            sandbox_chains=config.default_sandbox_chains(),
            business_profile_sells=True,
            review_delay_s=config.review_delay_s,
            step_delay_s=config.step_delay_s,
            max_buy=config.max_buy,
            api_latency_ms=config.api_latency_ms,
            webhook_mode="deliver",
            webhook_delay_s=0.0,
            reachable=True,
            rate_shift=Decimal(1),
        )


@dataclass
class Review:
    """One KYC submission. The outcome is fixed at submission (test values) or by the control;
    what a reader sees is computed against the clock (kyc.review_view)."""

    submitted_at: float  # clock time of the submission
    document_number: str  # decides the outcome by prefix
    outcome: Literal["approve", "reject", "nodeposit"]  # what the review ends as
    decide_at: float  # clock time the outcome becomes visible
    expire_at: float | None  # clock time an approval turns `expired` (None: never)


@dataclass
class SandboxCustomer:
    id: str  # cus_...
    type: Literal["individual", "business"]  # business profiles may only sell
    reference: str  # the wallet, lowercase (one customer per reference)
    first_name: str  # as registered
    last_name: str  # as registered; test values Refused / Blocked
    email: str  # as registered
    phone: str  # as registered
    birth_date: str | None  # forwarded by the simulator, kept as given
    address: dict[str, Any] | None  # forwarded by the simulator, kept as given
    created_at: float  # clock time
    review: Review | None = None  # latest KYC submission
    balance: Decimal = Decimal(0)  # NGNS parked by stalled payouts (retry-payout empties it)
    verify_token: str | None = None  # token of the hosted verification page, once asked for


@dataclass
class SandboxQuote:
    id: str  # quo_...
    side: Side  # buy: NGN -> NGNS, sell: NGNS -> NGN
    chain_id: int  # chain the token side settles on
    sandbox: bool  # quoted on the sandbox account
    source_amount: Decimal  # what the user pays, source currency
    target_amount: Decimal  # what the user receives after the fee, target currency
    rate: Decimal  # target per source
    fee: Decimal  # in the target currency
    rate_label: str  # display string
    fee_label: str  # display string
    expires_at: float  # clock time the lock ends
    used: bool = False  # a quote books at most one transfer


@dataclass
class SandboxRecipient:
    id: str  # rcp_...
    customer_id: str | None  # None for the business profile
    bank_code: str  # CBN code
    bank_name: str  # from the bank list
    account_number: str  # 6-12 digits
    account_name: str  # as resolved


@dataclass
class StatusEntry:
    status: str  # provider status word
    at: float  # clock time of the change


@dataclass
class SandboxTransfer:
    id: str  # trf_...
    reference: str  # the simulator's id; unique
    side: Side  # buy or sell
    chain_id: int  # chain of the token leg
    sandbox: bool  # created on the sandbox account
    source_amount: Decimal  # fiat on a buy, token on a sell
    target_amount: Decimal  # token on a buy, fiat on a sell (after fee)
    rate_label: str  # copied from the quote
    fee_label: str  # copied from the quote
    customer_id: str | None  # None: business profile sell
    recipient_id: str | None  # sell payout recipient
    retry_of: str | None  # original transfer of a payout retry
    created_at: float  # clock time
    expires_at: float  # end of the payment window (never enforced by the provider)
    status: str = "awaiting_funds"  # provider status word
    history: list[StatusEntry] = field(default_factory=list)  # every status with its time
    updated_at: float = 0.0  # clock time of the last change
    next_step_at: float | None = None  # when automatic progress takes the next step
    stalled: bool = False  # automatic progress stops at funds_converted
    parked: Decimal = Decimal(0)  # NGNS this transfer parked in the customer's balance
    retried_by: str | None = None  # the payout retry that paid what this transfer parked
    received: Decimal = Decimal(0)  # source currency received so far (short pay-ins add up)
    late: bool = False  # the pay-in arrived after expiresAt
    refund_due_at: float | None = None  # failed with refund: when `refunded` follows
    refund_hash: str | None = None  # sell refunds: NGNS sent back on chain
    failure_reason: str | None = None  # why the provider failed it
    # buy pay-in: the temporary bank account the user pays into
    bank_account: dict[str, str] | None = None
    deposit_address: str | None = None  # sell pay-in: a fresh address per transfer
    # Its private key: the address is a real account, so whatever lands there stays
    # recoverable by hand (the sandbox does not sweep deposits; refunds come from the treasury).
    deposit_key: str | None = None
    deposit_baseline: int = 0  # NGNS units the deposit address held at creation
    refund_address: str | None = None  # sell: where a refund goes
    destination: str | None = None  # buy: wallet the NGNS is paid to
    payout_hash: str | None = None  # buy: the payout transaction on chain
    payout_units: int = 0  # buy: NGNS atomic units sent


@dataclass
class WebhookRecord:
    event_id: str  # evt_...
    transfer_id: str  # whose status changed
    status: str  # the status the event announces
    created: float  # clock time of the change
    outcome: str = "pending"  # pending, delivered, dropped, failed, no_url
    response_status: int | None = None  # HTTP status of the receiver, when one answered
    error: str | None = None  # transport error, when none answered
    send_at: float | None = None  # delay mode: clock time the event is released
    body: bytes = b""  # the exact bytes signed and sent


@dataclass
class SandboxState:
    settings: RuntimeSettings  # live switches and runtime config
    rng: RandomStream  # ids, account numbers, deposit keys (rates have their own walk)
    rate_epoch: float  # clock time the rate walk starts from
    customers: dict[str, SandboxCustomer] = field(default_factory=dict)  # by id
    quotes: dict[str, SandboxQuote] = field(default_factory=dict)  # by id
    recipients: dict[str, SandboxRecipient] = field(default_factory=dict)  # by id
    transfers: dict[str, SandboxTransfer] = field(default_factory=dict)  # by id
    webhooks: list[WebhookRecord] = field(default_factory=list)  # every event, in order
    calls: Counter[str] = field(default_factory=Counter)  # "METHOD /api/v1/route" -> count

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{self.rng.getrandbits(96):024x}"

    def customer_by_reference(self, reference: str) -> SandboxCustomer | None:
        return next((c for c in self.customers.values() if c.reference == reference), None)

    def transfer_by_reference(self, reference: str) -> SandboxTransfer | None:
        return next((t for t in self.transfers.values() if t.reference == reference), None)
