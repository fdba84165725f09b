"""A simulated maker's answer to one rfq: `Quoter.reply` checks the rfq against what the maker
serves, prices it (`price_rfq`: what to give and take, or why to decline), signs the order and
books the commitment its quote holds.

`price_rfq` is pure: it prices against the curve and the inventory the caller computed.
`OrderSigner` signs exactly as `contracts.orders.sign_order` does (same digest, same
deterministic RFC 6979 secp256k1 signature through coincurve, the backend eth-account uses
here, same bytes), but parses its private key once instead of on every order.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from coincurve import PrivateKey
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from contracts.orders import ORDER_FIELDS, RfqOrder, permit_witness_digest
from makers.chainbook import ChainBook, ChainState
from makers.commitments import Commitment
from makers.config import MakerConfig
from makers.latency import RandomLike
from makers.pricing import PriceCurve, PricingModel
from rfqkit.maker_protocol import Decline, DeclineReason, MakerQuote, OrderTerms, Rfq

V_OFFSET = 27  # Ethereum's v for a signature outside a transaction


@dataclass(frozen=True)
class FirmPrice:
    """A firm price: the maker gives `gives` of the rfq's buyToken and receives `receives` of
    its sellToken, the taker paying `fee` on top."""

    gives: int
    receives: int
    fee: int


@dataclass(frozen=True)
class Declined:
    reason: DeclineReason
    max_sell_amount: int | None = None


def price_rfq(
    rfq: Rfq, curve: PriceCurve, inventory: int, *, decline: bool = False
) -> FirmPrice | Declined:
    """Price `rfq` on `curve` with `inventory` to give. `decline`: the `decline` behaviour,
    which names half the asked size (at most the depth) instead of quoting."""
    depth = curve.depth(inventory)
    if decline:
        asked = rfq.maker_receives
        if asked is None:
            assert rfq.maker_gives is not None
            asked = curve.price_exact_output(rfq.maker_gives, inventory) or depth
        return Declined("liquidity", min(depth, asked // 2))
    if rfq.kind == "exact_input":
        assert rfq.maker_receives is not None
        assert rfq.fee_amount is not None
        receives, fee = rfq.maker_receives, rfq.fee_amount
        gives = curve.price_exact_input(receives, inventory)
        if gives is None:
            if receives <= depth:
                return Declined("min_size")
            return Declined("liquidity", depth)
        return FirmPrice(gives, receives, fee)
    assert rfq.maker_gives is not None
    gives = rfq.maker_gives
    receives_or_none = curve.price_exact_output(gives, inventory)
    if receives_or_none is None:
        return Declined("liquidity", depth)
    return FirmPrice(gives, receives_or_none, receives_or_none * rfq.fee_bps // 10_000)


def expiry_ms(rfq: Rfq, quote_ttl_ms: int | None) -> int:
    """When the quote lapses: `quote_ttl_ms` after replyBy (or the rfq's maximum), within the
    rfq's bounds."""
    expires = rfq.max_expires_at_ms if quote_ttl_ms is None else rfq.reply_by_ms + quote_ttl_ms
    return min(rfq.max_expires_at_ms, max(rfq.min_expires_at_ms, expires))


class OrderSigner:
    """Signs orders with private keys parsed once (a maker signs with one key, or a wrong one
    for its `bad_signature` behaviour)."""

    def __init__(self) -> None:
        self._keys: dict[str, PrivateKey] = {}

    def _key(self, private_key: str) -> PrivateKey:
        key = self._keys.get(private_key)
        if key is None:
            key = self._keys[private_key] = PrivateKey(bytes(HexBytes(private_key)))
        return key

    def sign(self, private_key: str, order: RfqOrder, chain_id: int, permit2_address: str) -> bytes:
        """The 65-byte (r, s, v) signature of `order`, v in {27, 28}: `sign_order`'s bytes."""
        digest = permit_witness_digest(order, chain_id, permit2_address)
        signature: bytes = self._key(private_key).sign_recoverable(digest, hasher=None)
        # coincurve gives r (32 bytes), s (32 bytes, low-s) and the recovery id (0 or 1).
        return signature[:64] + bytes([signature[64] + V_OFFSET])


def quote_message(
    quote_id: str, expires_at_ms: int, order: RfqOrder, signature: bytes
) -> MakerQuote:
    """The `quote` for a signed order. Built without re-validating: every field comes from an
    RfqOrder (checked addresses, uint256 amounts) or from the rfq the server sent."""
    fields = {name: getattr(order, name) for name, _ in ORDER_FIELDS}
    return MakerQuote.model_construct(
        quoteId=quote_id,
        expiresAtMs=expires_at_ms,
        order=OrderTerms.model_construct(**fields),
        signature="0x" + signature.hex(),
    )


def underfunded_factor(config: MakerConfig) -> Decimal | None:
    """How many times its balance an `underfunded` maker pretends to hold (None otherwise)."""
    return config.underfunded_factor if config.behaviour == "underfunded" else None


class Quoter:
    """Answers rfqs for one maker: its chains and commitments are `book`'s."""

    def __init__(self, book: ChainBook) -> None:
        self.book = book
        self._wrong_key = "0x" + keccak(text=f"rfqsim:bad-signature:{book.name}").hex()
        self._signer = OrderSigner()

    def reply(
        self, rfq: Rfq, config: MakerConfig, pricing: PricingModel, rng: RandomLike
    ) -> MakerQuote | Decline:
        """The maker's answer under `config` and `pricing`; `rng` draws the flaky declines."""
        state = self.book.states.get(rfq.chain_id)
        if state is None or not state.ready:
            return decline(rfq, "unavailable")
        info = state.info
        # Never sign for a reactor or spender other than the ones the welcome named.
        if (
            rfq.reactor.lower() != info.reactor.lower()
            or rfq.signature_transfer.lower() != info.signature_transfer.lower()
        ):
            return decline(rfq, "rejected")
        sell = state.tokens.get(rfq.sell_token.lower())
        buy = state.tokens.get(rfq.buy_token.lower())
        curve = None if sell is None or buy is None else pricing.curve(sell, buy)
        if curve is None:
            return decline(rfq, "unavailable")
        behaviour = config.behaviour
        if behaviour == "flaky" and rng.random() < config.flaky_decline_fraction:
            return decline(rfq, "unavailable")
        inventory = self.book.inventory(rfq.chain_id, rfq.buy_token, underfunded_factor(config))
        priced = price_rfq(rfq, curve, inventory, decline=behaviour == "decline")
        if isinstance(priced, Declined):
            return decline(rfq, priced.reason, priced.max_sell_amount)
        return self._sign(rfq, state, config, priced)

    def _sign(
        self, rfq: Rfq, state: ChainState, config: MakerConfig, priced: FirmPrice
    ) -> MakerQuote:
        expires = expiry_ms(rfq, config.quote_ttl_ms)
        wallet = self.book.wallet
        order = RfqOrder(
            reactor=rfq.reactor,
            maker=wallet.address,
            taker=rfq.taker,
            inputToken=rfq.buy_token,
            inputAmount=priced.gives,
            outputToken=rfq.sell_token,
            outputAmount=priced.receives,
            feeAmount=priced.fee,
            nonce=self.book.next_nonce(state),
            deadline=-(-expires // 1000) + config.deadline_slack_s,
        )
        key = self._wrong_key if config.behaviour == "bad_signature" else wallet.private_key
        signature = self._signer.sign(key, order, rfq.chain_id, rfq.signature_transfer)
        self.book.commitments[rfq.quote_id] = Commitment(
            chain_id=rfq.chain_id,
            token=rfq.buy_token.lower(),
            amount=priced.gives,
            expires_at_ms=expires,
            nonce=order.nonce,
        )
        return quote_message(rfq.quote_id, expires, order, signature)


def decline(rfq: Rfq, reason: DeclineReason, max_sell_amount: int | None = None) -> Decline:
    if max_sell_amount is not None and max_sell_amount <= 0:
        max_sell_amount = None
    return Decline(quote_id=rfq.quote_id, reason=reason, max_sell_amount=max_sell_amount)
