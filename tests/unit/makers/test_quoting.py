"""The quote path's shortcuts give exactly what the slow path gives: the cached-key signer
signs `sign_order`'s bytes, and the unvalidated quote is the validated one."""

from __future__ import annotations

import random

from contracts.orders import RfqOrder, recover_order_signer, sign_order
from makers.quoting import OrderSigner, quote_message
from rfqkit.maker_protocol import MakerQuote, OrderTerms, parse_maker_message, serialize
from rfqkit.wallets import maker_wallet

WALLET = maker_wallet(0)
PERMIT2 = "0x" + "22" * 20


def random_order(rng: random.Random) -> RfqOrder:
    return RfqOrder(
        reactor="0x" + "11" * 20,
        maker=WALLET.address,
        taker="0x" + rng.getrandbits(160).to_bytes(20, "big").hex(),
        inputToken="0x" + "a1" * 20,
        inputAmount=rng.getrandbits(rng.randrange(1, 256)),
        outputToken="0x" + "b2" * 20,
        outputAmount=rng.getrandbits(rng.randrange(1, 256)),
        feeAmount=rng.getrandbits(40),
        nonce=rng.getrandbits(248),
        deadline=rng.getrandbits(34),
    )


def test_signer_gives_sign_orders_bytes() -> None:
    rng = random.Random(11)
    signer = OrderSigner()
    keys = [WALLET.private_key] + [
        "0x" + rng.getrandbits(255).to_bytes(32, "big").hex() for _ in range(3)
    ]
    for _ in range(50):
        order = random_order(rng)
        for key in keys:
            chain_id = rng.choice((56, 97))
            assert signer.sign(key, order, chain_id, PERMIT2) == sign_order(
                key, order, chain_id, PERMIT2
            )
    order = random_order(rng)
    signature = signer.sign(WALLET.private_key, order, 56, PERMIT2)
    assert recover_order_signer(order, 56, PERMIT2, signature) == WALLET.address


def test_unvalidated_quote_is_the_validated_quote() -> None:
    rng = random.Random(12)
    for _ in range(20):
        order = random_order(rng)
        signature = bytes(rng.getrandbits(8) for _ in range(65))
        fast = quote_message("mq_1", 1_795_500_030_000, order, signature)
        slow = MakerQuote(
            quote_id="mq_1",
            expires_at_ms=1_795_500_030_000,
            order=OrderTerms.from_order(order),
            signature="0x" + signature.hex(),
        )
        assert fast == slow
        assert fast.order.nonce == order.nonce  # ints, as validation makes them
        assert serialize(fast) == serialize(slow)
        assert parse_maker_message(serialize(fast)) == slow
