"""Placing a limit order in two steps (spec 3 "POST /v1/limit-orders/prepare" and "POST
/v1/limit-orders"): the service builds the Permit2 typed data the maker signs, then checks the
signed order (terms, signature, funding, nonce) and rests it.

The bodies carry no fee and no taker: the taker is always the zero address (anyone fills) and
the fee is always the corridor's fee_bps of the output, rounded down (pricing.order_fee), so the
service rebuilds at submit exactly the witness the maker signed at prepare."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Literal

from contracts.orders import (
    ZERO_ADDRESS,
    RfqOrder,
    encode_order,
    order_hash,
    permit_witness_digest,
    permit_witness_typed_data,
    recover_order_signer,
)
from simulator.clock import Clock
from simulator.errors import InvalidRequest, UpstreamError
from simulator.randomness import RandomSource
from simulator.services.access.callers import Caller
from simulator.services.access.environments import require_v1_chain
from simulator.services.limit_orders.chain_check import require_pair
from simulator.services.limit_orders.model import LimitOrder
from simulator.services.limit_orders.ports import (
    ChainUnreadable,
    MakerChainReader,
    SignatureChecker,
)
from simulator.services.limit_orders.pricing import MakerDepth, min_buy_amount, order_fee
from simulator.services.limit_orders.store import BookStore
from simulator.services.shared.timelines import TimelineSink
from simulator.services.shared.venue import ChainVenue, VenueDirectory
from simulator.settings import BookSettings

NONCE_BITS = 248  # Permit2 unordered nonces: any uint256; 248 random bits never collide
NOT_FUNDED = "Order batch is not funded"  # the spec's message, word for word
PricingMode = Literal["fastFill", "queue"]


@dataclass(frozen=True)
class PrepareRequest:
    chain_id: int
    maker: str
    sell_token: str
    sell_amount: int
    buy_token: str
    buy_amount: int | None  # exactly one of this and pricing_mode
    pricing_mode: PricingMode | None
    margin_bps: int
    deadline: int  # Unix seconds as asked (capped at about one year)
    preferred: list[str] | None
    restricted: list[str] | None


@dataclass(frozen=True)
class PreparedPricing:
    mode: PricingMode
    margin_bps: int
    assumed_rate_ray: int  # maker frame: what the service assumed the order would trade at
    depth: MakerDepth  # the filling market makers' depth it was read from


@dataclass(frozen=True)
class PreparedPlacement:
    chain_id: int
    order: RfqOrder
    typed_data: dict[str, Any]
    digest: bytes
    pricing: PreparedPricing | None

    @property
    def encoded_order(self) -> bytes:
        return encode_order(self.order)


@dataclass(frozen=True)
class SignedPlacement:
    """POST /v1/limit-orders: the prepared order's fields and the maker's signature."""

    chain_id: int
    reactor: str
    maker: str
    input_token: str
    input_amount: int
    output_token: str
    output_amount: int
    nonce: int
    deadline: int
    signature: bytes


def _terms_check(chain: ChainVenue, sell_amount: int, buy_amount: int, fee_bps: int) -> None:
    if sell_amount <= 0:
        raise InvalidRequest.for_field("sellAmount", "must be greater than zero")
    minimum = min_buy_amount(fee_bps)
    if buy_amount < minimum:
        raise InvalidRequest(
            f"buyAmount is below minBuyAmount {minimum}, the smallest output able to carry the "
            "reactor fee",
            details={"reason": "below_minimum", "field": "buyAmount", "minimum": str(minimum)},
        )


class Placement:
    """prepare() and place(): the typed data, then the checks that let a signed order rest."""

    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        venue: VenueDirectory,
        store: BookStore,
        funding: MakerChainReader,
        signatures: SignatureChecker,
        settings: BookSettings,
        history: TimelineSink,
    ) -> None:
        self._clock = clock
        self._random = random
        self._venue = venue
        self._store = store
        self._funding = funding
        self._signatures = signatures
        self._settings = settings
        self._history = history  # every order's timeline, from its placement

    def build(
        self,
        caller: Caller,
        request: PrepareRequest,
        buy_amount: int,
        pricing: PreparedPricing | None,
    ) -> PreparedPlacement:
        """The order and its typed data, once the output (given or priced) is known."""
        chain = require_v1_chain(self._venue, caller, request.chain_id)
        sell, buy, corridor = require_pair(chain, request.sell_token, request.buy_token)
        fee_bps = corridor.timing.fee_bps
        _terms_check(chain, request.sell_amount, buy_amount, fee_bps)
        now = int(self._clock.time())
        if request.deadline <= now:
            raise InvalidRequest(
                "deadline must be in the future", details={"reason": "deadline_passed"}
            )
        order = RfqOrder(
            reactor=chain.contracts.reactor,
            maker=request.maker,
            taker=ZERO_ADDRESS,
            inputToken=sell.address,
            inputAmount=request.sell_amount,
            outputToken=buy.address,
            outputAmount=buy_amount,
            feeAmount=order_fee(buy_amount, fee_bps),
            # A nonce must never repeat for a maker, also across simulator runs on an attached
            # chain: it comes from the OS CSPRNG, not the seeded source.
            nonce=secrets.randbits(NONCE_BITS),
            deadline=min(request.deadline, now + self._settings.max_deadline_s),
        )
        signature_transfer = chain.contracts.signature_transfer
        return PreparedPlacement(
            chain_id=chain.chain_id,
            order=order,
            typed_data=permit_witness_typed_data(order, chain.chain_id, signature_transfer),
            digest=permit_witness_digest(order, chain.chain_id, signature_transfer),
            pricing=pricing,
        )

    async def place(self, caller: Caller, signed: SignedPlacement) -> tuple[LimitOrder, bool]:
        """The resting order for a signed placement and whether it is new; an order already
        known (the same signed terms) comes back as it is, whatever became of it."""
        chain = require_v1_chain(self._venue, caller, signed.chain_id)
        sell, buy, corridor = require_pair(chain, signed.input_token, signed.output_token)
        if signed.reactor.lower() != chain.contracts.reactor.lower():
            raise InvalidRequest(
                "reactor is not this chain's settlement reactor",
                details={"reason": "wrong_reactor", "reactor": chain.contracts.reactor},
            )
        fee_bps = corridor.timing.fee_bps
        order = RfqOrder(
            reactor=chain.contracts.reactor,
            maker=signed.maker,
            taker=ZERO_ADDRESS,
            inputToken=sell.address,
            inputAmount=signed.input_amount,
            outputToken=buy.address,
            outputAmount=signed.output_amount,
            feeAmount=order_fee(signed.output_amount, fee_bps),
            nonce=signed.nonce,
            deadline=signed.deadline,
        )
        digest_hash = order_hash(order)
        known = self._store.by_order_hash(chain.chain_id, digest_hash)
        if known is not None:
            return known, False
        _terms_check(chain, order.inputAmount, order.outputAmount, fee_bps)
        now = self._clock.time()
        if order.deadline <= now:
            raise InvalidRequest("The order's deadline has passed", details={"reason": "expired"})
        if order.deadline > now + self._settings.max_deadline_s + 86_400:
            raise InvalidRequest(
                "deadline is more than about one year away",
                details={"reason": "deadline_too_far", "maxSeconds": self._settings.max_deadline_s},
            )
        await self._check_signature(chain, order, signed.signature)
        try:
            balance, allowance, nonce_used = await self._funding.maker_funding(
                chain.chain_id,
                order.inputToken,
                order.maker,
                chain.contracts.signature_transfer,
                order.nonce,
            )
        except ChainUnreadable as exc:
            raise UpstreamError(
                "The maker's funding could not be read on chain; retry",
                details={"reason": "chain_unreachable"},
            ) from exc
        if nonce_used:
            raise InvalidRequest(
                "The order's Permit2 nonce is already used or cancelled",
                details={"reason": "nonce_used"},
            )
        if min(balance, allowance) < order.inputAmount:
            raise InvalidRequest(
                NOT_FUNDED,
                details={
                    "reason": "not_funded",
                    "balance": str(balance),
                    "allowance": str(allowance),
                    "required": str(order.inputAmount),
                },
            )
        # No await from here on: the re-check and the write are one step.
        known = self._store.by_order_hash(chain.chain_id, digest_hash)
        if known is not None:
            return known, False
        previous = self._store.nonce_holder(chain.chain_id, order.maker, order.nonce)
        if previous is not None and previous.fill is None and previous.cancelled_at is None:
            previous.superseded = True  # only one of two orders on one nonce can ever settle
            self._store.touch()
            self._history.status(
                previous.order_id, "SUPERSEDED", "the maker placed another order on its nonce"
            )
        record = LimitOrder(
            order_id=self._random.new_id("lo"),
            chain_id=chain.chain_id,
            partner_id=caller.partner_id,
            order=order,
            signature=signed.signature,
            order_hash=digest_hash,
            sell_decimals=sell.decimals,
            buy_decimals=buy.decimals,
            created_at=now,
            sequence=self._store.next_sequence(),
        )
        self._store.add(record)
        self._history.start(
            record.order_id,
            "ACTIVE",
            {
                "chain_id": record.chain_id,
                "sell_token": order.inputToken,
                "buy_token": order.outputToken,
                "sell_amount": str(order.inputAmount),
                "buy_amount": str(order.outputAmount),
                "maker": order.maker,
                "makers": [order.maker],
            },
        )
        self._history.step(
            record.order_id, "placed", caller.identity, order.maker, order.nonce, order.deadline
        )
        return record, True

    async def _check_signature(self, chain: ChainVenue, order: RfqOrder, signature: bytes) -> None:
        signature_transfer = chain.contracts.signature_transfer
        try:
            if recover_order_signer(order, chain.chain_id, signature_transfer, signature) == (
                order.maker
            ):
                return
        except ValueError:
            pass  # not an EOA signature; a contract maker may still accept it (ERC-1271)
        digest = permit_witness_digest(order, chain.chain_id, signature_transfer)
        try:
            valid = await self._signatures.is_valid_signature(
                chain.chain_id, order.maker, digest, signature
            )
        except ChainUnreadable as exc:
            raise UpstreamError(
                "The maker's signature could not be checked on chain; retry",
                details={"reason": "chain_unreachable"},
            ) from exc
        if not valid:
            raise InvalidRequest(
                "signature does not verify as the maker's over this order for the reactor",
                details={"reason": "invalid_signature"},
            )
