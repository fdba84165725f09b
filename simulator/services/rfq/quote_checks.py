"""Checks a maker's signed order must pass before it can be part of a quote: every quote the
simulator returns must settle on chain if the taker executes it before expiresAt."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from contracts.orders import RfqOrder, encode_order, order_hash, recover_order_signer
from simulator.services.rfq.history import MakerOffer
from simulator.services.rfq.inventory import MakerHold
from simulator.services.rfq.model import FilledOrder
from simulator.services.rfq.ports import HoldLedger
from simulator.services.shared.amounts import fee_on, rate_ray
from simulator.services.shared.venue import ChainVenue

# Why an order was not usable, as timelines and the console name it (the maker is told `detail`).
RejectReason = Literal[
    "terms",  # parties, tokens, amounts, fee or deadline are not what was asked
    "expiry_too_short",  # expiresAtMs before minExpiresAtMs
    "expiry_too_long",  # expiresAtMs after maxExpiresAtMs
    "bad_signature",  # does not recover to the maker's funding wallet
    "nonce_used",
    "underfunded",  # balance short of what its live quotes and this one need
    "allowance",  # allowance to the signature-transfer contract short of it
    "malformed",  # the answer did not parse as a quote
]


class QuoteRejected(Exception):
    def __init__(self, detail: str, reason: RejectReason = "terms") -> None:
        super().__init__(detail)
        self.detail = detail
        self.reason = reason


@dataclass(frozen=True)
class Ask:
    """One firm request sent to one maker (the fields of the `rfq` message that bind it)."""

    rfq_id: str
    quote_id: str
    chain: ChainVenue
    maker: str  # funding wallet, checksummed
    taker: str
    sell_token: str  # taker sells = maker receives (order outputToken)
    buy_token: str  # taker buys = maker gives (order inputToken)
    exact_input: bool
    maker_receives: int | None  # fixed on exact input
    maker_gives: int | None  # fixed on exact output
    fee_bps: int
    min_expires_at: float  # unix seconds
    max_expires_at: float
    owner: str = ""  # the caller whose RFQ it is (key:<id> or ip:<address>)


def check_terms(ask: Ask, order: RfqOrder, expires_at: float) -> None:
    """The order says what was asked: parties, tokens, the fixed amount and the fee rule."""
    contracts = ask.chain.contracts
    expected = {
        "reactor": contracts.reactor,
        "maker": ask.maker,
        "taker": ask.taker,
        "inputToken": ask.buy_token,
        "outputToken": ask.sell_token,
    }
    for name, value in expected.items():
        if getattr(order, name).lower() != value.lower():
            raise QuoteRejected(f"{name} must be {value}")
    if ask.exact_input and order.outputAmount != ask.maker_receives:
        raise QuoteRejected(f"outputAmount must be {ask.maker_receives}")
    if not ask.exact_input and order.inputAmount != ask.maker_gives:
        raise QuoteRejected(f"inputAmount must be {ask.maker_gives}")
    if order.feeAmount != fee_on(order.outputAmount, ask.fee_bps):
        raise QuoteRejected(f"feeAmount must be outputAmount * {ask.fee_bps} / 10000, rounded down")
    if order.inputAmount <= 0 or order.outputAmount <= 0:
        raise QuoteRejected("amounts must be positive")
    if expires_at < ask.min_expires_at:
        raise QuoteRejected(
            "expiresAtMs outside [minExpiresAtMs, maxExpiresAtMs]", "expiry_too_short"
        )
    if expires_at > ask.max_expires_at:
        raise QuoteRejected(
            "expiresAtMs outside [minExpiresAtMs, maxExpiresAtMs]", "expiry_too_long"
        )
    if order.deadline < math.ceil(expires_at):
        raise QuoteRejected("deadline must be at or after expiresAtMs")


def check_signature(ask: Ask, order: RfqOrder, signature: bytes) -> None:
    try:
        signer = recover_order_signer(
            order, ask.chain.chain_id, ask.chain.contracts.signature_transfer, signature
        )
    except ValueError as exc:
        raise QuoteRejected(f"signature does not recover: {exc}", "bad_signature") from exc
    if signer.lower() != ask.maker.lower():
        raise QuoteRejected("signature is not by the maker's funding wallet", "bad_signature")


async def hold_if_funded(
    ask: Ask,
    order: RfqOrder,
    inventory: HoldLedger,
    funding: tuple[int, int, bool],
    expires_at: float,
) -> MakerHold:
    """The inventory check and the hold are one atomic step of the ledger, so two auctions
    (on one instance or two) cannot both spend the same maker balance or nonce."""
    balance, allowance, nonce_used = funding
    if nonce_used:
        raise QuoteRejected("nonce already used", "nonce_used")
    hold = MakerHold(
        rfq_id=ask.rfq_id,
        quote_id=ask.quote_id,
        chain_id=ask.chain.chain_id,
        maker=ask.maker.lower(),
        token=order.inputToken.lower(),
        amount=order.inputAmount,
        nonce=order.nonce,
        until=expires_at,
        sell_token=ask.sell_token.lower(),
        owner=ask.owner,
    )
    refused = await inventory.try_hold(hold, balance, allowance)
    if refused is None:
        return hold
    if refused.reason == "nonce_used":
        raise QuoteRejected("nonce already used", "nonce_used")
    if refused.reason == "underfunded":
        raise QuoteRejected(
            f"underfunded: balance {balance}, committed {refused.committed}", "underfunded"
        )
    raise QuoteRejected(f"allowance to the signature-transfer contract is {allowance}", "allowance")


def filled_order(ask: Ask, order: RfqOrder, signature: bytes, expires_at: float) -> FilledOrder:
    return FilledOrder(
        maker=ask.maker,
        quote_id=ask.quote_id,
        order_hash=order_hash(order),
        encoded_order=encode_order(order),
        signature=signature,
        taker_pays=order.outputAmount + order.feeAmount,
        maker_receives=order.outputAmount,
        maker_gives=order.inputAmount,
        fee_amount=order.feeAmount,
        nonce=order.nonce,
        deadline=order.deadline,
        expires_at=expires_at,
    )


def offer(order: RfqOrder, sell_decimals: int, buy_decimals: int) -> MakerOffer:
    """What a signed order offers the taker, usable or not (its answer's timeline step)."""
    taker_pays = order.outputAmount + order.feeAmount
    return MakerOffer(
        sell_amount=taker_pays,
        buy_amount=order.inputAmount,
        fee_amount=order.feeAmount,
        rate_ray=rate_ray(taker_pays, sell_decimals, order.inputAmount, buy_decimals),
    )
