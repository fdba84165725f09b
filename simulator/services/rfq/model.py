"""The RFQ record and its parts, and the reactor Fill events settlement reconciles: plain data.
Records live in the RFQ store (store.py) and are mutated only by RfqService and the settlement
reconciler."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

RfqStatus = Literal["soliciting", "quoted", "no_quote", "submitted", "filled", "failed", "expired"]
NoQuoteReason = Literal["no_makers_online", "no_restricted_liquidity", "no_valid_quote"]


@dataclass
class RoutingState:
    preference_applied: bool = False  # preferred wallets were asked first
    restriction_applied: bool = False  # only restricted wallets were asked
    fallback_used: bool = False  # the open market was asked after the preferred head start
    target_maker_wallets: list[str] = field(default_factory=list)  # steering list after dedupe
    preferred_quotes_received: int = 0  # usable quotes from targeted wallets
    open_market_quotes_received: int = 0  # usable quotes from everyone else


@dataclass(frozen=True)
class FilledOrder:
    """One maker order of a quote, as signed."""

    maker: str  # funding wallet
    quote_id: str  # the maker-side id of this order (mq_…)
    order_hash: bytes
    encoded_order: bytes
    signature: bytes
    taker_pays: int  # outputAmount + feeAmount: what leaves the taker for this order
    maker_receives: int  # outputAmount
    maker_gives: int  # inputAmount: what the taker receives
    fee_amount: int
    nonce: int
    deadline: int  # unix seconds, on chain
    expires_at: float  # the maker's accept cutoff (unix seconds)


@dataclass
class QuoteState:
    """The firm quote as issued. Its attributes are the `quote` object of POST /v2/rfq/request
    under their wire names (api/rfq/schemas.py `Quote` is validated from it)."""

    orders: list[FilledOrder]
    expires_at: float  # accept cutoff: earliest maker cutoff, capped by the TTL
    order_deadline: float  # earliest order deadline
    latest_order_deadline: float  # last instant any single order is executable
    sell_amount: int  # the exact input asked for, else takerPays
    rate_ray: int  # buy per sell in whole tokens, times 10^27
    taker: str  # the wallet the orders are bound to
    reactor: str  # the contract that executes the orders: the approval's spender

    @property
    def spender(self) -> str:
        return self.reactor

    @property
    def encoded_order(self) -> bytes:
        """The first order: what a client that executes one order reads."""
        return self.orders[0].encoded_order

    @property
    def signature(self) -> bytes:
        return self.orders[0].signature

    @property
    def taker_pays(self) -> int:
        return sum(o.taker_pays for o in self.orders)

    @property
    def buy_amount(self) -> int:
        return sum(o.maker_gives for o in self.orders)

    @property
    def fee_amount(self) -> int:
        return sum(o.fee_amount for o in self.orders)


@dataclass
class StoredRfq:
    rfq_id: str
    chain_id: int
    sell_token: str
    buy_token: str
    requested_sell: int | None  # exact-input size (gross)
    requested_buy: int | None  # exact-output size
    taker: str
    owner: str  # caller identity that created it (key:… or ip:…)
    partner_id: str | None  # the key's partner: any key of it owns this RFQ
    claim_hash: bytes  # SHA-256 of the claim token; the token itself is never stored
    created_at: float
    reply_by: float
    quote_ttl_ms: int
    status: RfqStatus = "soliciting"
    routing: RoutingState = field(default_factory=RoutingState)
    no_quote_reason: NoQuoteReason | None = None
    quote: QuoteState | None = None
    cancelled: bool = False  # the taker gave the quote back (status stays quoted)
    tx_hash: str | None = None
    submitted_at: float | None = None
    filled_at: float | None = None
    fail_reason: str | None = None
    # Settled amounts once a fill is seen: actual debit incl. fee, delivered amount, fee.
    settled_sell: int | None = None
    settled_buy: int | None = None
    settled_fee: int | None = None
    late: bool = False  # the fill corrected an earlier expired/failed
    superseded: RfqStatus | None = None  # what a late fill corrected
    previous_fail_reason: str | None = None
    provisional_since: float | None = None  # when it became expired/failed (24 h corrections)
    available_sell: int | None = None  # no_quote: published depth on the sell leg (gross)
    available_buy: int | None = None  # no_quote: published depth on the buy leg
    reserved_until: float | None = None  # no_quote: when another caller's live quote lapses

    # What the record shows (GET /v2/rfq/{rfq_id} and the rfq.* events read these): amounts
    # settled once filled, the winner's quote once quoted, else the request echoed (spec:
    # "before a winner exists they echo the request"); a side the request did not name is None.
    @property
    def sell_amount(self) -> int | None:
        if self.settled_sell is not None:
            return self.settled_sell
        return self.quote.taker_pays if self.quote is not None else self.requested_sell

    @property
    def buy_amount(self) -> int | None:
        if self.settled_sell is not None:
            return self.settled_buy
        return self.quote.buy_amount if self.quote is not None else self.requested_buy

    @property
    def fee_amount(self) -> int | None:
        if self.settled_sell is not None:
            return self.settled_fee
        return self.quote.fee_amount if self.quote is not None else None

    @property
    def expires_at(self) -> float | None:
        """The quote's accept cutoff (None without a quote)."""
        return self.quote.expires_at if self.quote is not None else None

    @property
    def supersedes(self) -> str | None:
        """The event a late fill corrects (rfq.expired or rfq.failed), else None."""
        return f"rfq.{self.superseded}" if self.superseded else None

    def at_rest_since(self) -> float | None:
        """Service time from which only the 24 h correction can still change this record (a
        late fill of an expired or failed quote); None while it is live."""
        if self.status == "no_quote":
            return self.created_at
        if self.status == "filled":
            return self.filled_at if self.filled_at is not None else self.created_at
        if self.status in ("expired", "failed"):
            return self.provisional_since
        return None
