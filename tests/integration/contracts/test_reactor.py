"""RfqReactor settlement on a real chain: exact balances, fees, batches, taker binding,
deadlines, nonces and cancellation."""

from __future__ import annotations

import pytest

from contracts.orders import (
    ORDER_TYPE_STRING,
    ORDER_TYPEHASH,
    WITNESS_TYPE_STRING,
    encode_order,
    nonce_word_and_mask,
    order_hash,
)
from tests.integration.contracts.env import Env

pytestmark = pytest.mark.integration

WETH = 10**18
USDC = 10**6


def test_reactor_constants_match_python(env: Env) -> None:
    reactor = env.reactor.functions
    assert reactor.ORDER_TYPEHASH().call() == ORDER_TYPEHASH
    assert reactor.WITNESS_TYPE_STRING().call() == WITNESS_TYPE_STRING
    assert reactor.signatureTransfer().call() == env.signature_transfer.address
    assert reactor.feeRecipient().call() == env.fee_recipient.address
    assert ORDER_TYPE_STRING in WITNESS_TYPE_STRING
    order = env.order(env.makers[0].address, env.weth, 3 * WETH, env.usdc, 7_000 * USDC, fee=9)
    assert reactor.hashOrder(order.values()).call() == order_hash(order)


def test_single_fill_moves_exact_amounts_and_emits_fill(env: Env) -> None:
    maker, taker, fee_to = env.makers[0], env.taker, env.fee_recipient
    order = env.order(
        maker.address, env.weth, 2 * WETH, env.usdc, 5_000 * USDC, fee=5 * USDC, taker=taker.address
    )
    people = [maker.address, taker.address, fee_to.address, env.reactor.address]
    before = env.balances([env.weth, env.usdc], people)

    receipt = env.transact(taker, env.reactor.functions.execute(env.signed(maker, order)))

    after = env.balances([env.weth, env.usdc], people)
    weth, usdc = env.weth.address, env.usdc.address
    assert after[(weth, maker.address)] == before[(weth, maker.address)] - 2 * WETH
    assert after[(weth, taker.address)] == before[(weth, taker.address)] + 2 * WETH
    assert after[(usdc, maker.address)] == before[(usdc, maker.address)] + 5_000 * USDC
    assert after[(usdc, taker.address)] == before[(usdc, taker.address)] - 5_005 * USDC
    assert after[(usdc, fee_to.address)] == before[(usdc, fee_to.address)] + 5 * USDC
    assert after[(weth, fee_to.address)] == before[(weth, fee_to.address)]
    # The reactor never holds funds.
    assert after[(weth, env.reactor.address)] == after[(usdc, env.reactor.address)] == 0

    [event] = env.fill_events(receipt)
    assert event == {
        "orderHash": order_hash(order),
        "maker": maker.address,
        "taker": taker.address,
        "inputToken": weth,
        "inputAmount": 2 * WETH,
        "outputToken": usdc,
        "outputAmount": 5_000 * USDC,
        "feeAmount": 5 * USDC,
    }
    word, mask = nonce_word_and_mask(order.nonce)
    assert env.signature_transfer.functions.nonceBitmap(maker.address, word).call() & mask == mask


@pytest.mark.parametrize("fee", [0, 1, 123_456_789])
def test_fee_is_paid_by_taker_on_top_of_maker_output(env: Env, fee: int) -> None:
    maker, taker, fee_to = env.makers[1], env.taker, env.fee_recipient
    order = env.order(maker.address, env.usdc, 1_000 * USDC, env.weth, WETH // 3, fee=fee)
    maker_weth = env.balance(env.weth, maker.address)
    taker_weth = env.balance(env.weth, taker.address)
    fees_weth = env.balance(env.weth, fee_to.address)

    env.transact(taker, env.reactor.functions.execute(env.signed(maker, order)))

    assert env.balance(env.weth, maker.address) == maker_weth + WETH // 3  # fee not deducted
    assert env.balance(env.weth, taker.address) == taker_weth - WETH // 3 - fee
    assert env.balance(env.weth, fee_to.address) == fees_weth + fee


def test_batch_of_three_makers_settles_in_one_transaction(env: Env) -> None:
    taker = env.taker
    legs = [
        (WETH, 2_500 * USDC, 3 * USDC),
        (2 * WETH, 5_010 * USDC, 5 * USDC),
        (WETH // 2, 1_249 * USDC, 0),
    ]
    orders = [
        env.order(m.address, env.weth, give, env.usdc, get, fee=fee, taker=taker.address)
        for m, (give, get, fee) in zip(env.makers, legs, strict=True)
    ]
    people = [*(m.address for m in env.makers), taker.address, env.fee_recipient.address]
    before = env.balances([env.weth, env.usdc], people)

    receipt = env.transact(
        taker,
        env.reactor.functions.executeBatch(
            [env.signed(m, o) for m, o in zip(env.makers, orders, strict=True)]
        ),
    )

    after = env.balances([env.weth, env.usdc], people)
    weth, usdc = env.weth.address, env.usdc.address
    for maker, (give, get, _fee) in zip(env.makers, legs, strict=True):
        assert after[(weth, maker.address)] == before[(weth, maker.address)] - give
        assert after[(usdc, maker.address)] == before[(usdc, maker.address)] + get
    total_give = sum(g for g, _, _ in legs)
    total_pay = sum(get + fee for _, get, fee in legs)
    assert after[(weth, taker.address)] == before[(weth, taker.address)] + total_give
    assert after[(usdc, taker.address)] == before[(usdc, taker.address)] - total_pay
    fee_to = env.fee_recipient.address
    assert after[(usdc, fee_to)] == before[(usdc, fee_to)] + 8 * USDC
    events = env.fill_events(receipt)
    assert [e["orderHash"] for e in events] == [order_hash(o) for o in orders]
    assert [e["maker"] for e in events] == [m.address for m in env.makers]
    assert {e["taker"] for e in events} == {taker.address}


def test_batch_is_all_or_nothing(env: Env) -> None:
    taker = env.taker
    orders = [
        env.order(m.address, env.weth, WETH, env.usdc, 2_000 * USDC, fee=USDC) for m in env.makers
    ]
    signed = [env.signed(m, o) for m, o in zip(env.makers, orders, strict=True)]
    # The last order carries a signature by the wrong key.
    signed[2] = (signed[2][0], env.sign(env.stranger, orders[2]))
    people = [*(m.address for m in env.makers), taker.address, env.fee_recipient.address]
    before = env.balances([env.weth, env.usdc], people)

    env.expect_revert(taker, env.reactor.functions.executeBatch(signed), "InvalidSigner")

    assert env.balances([env.weth, env.usdc], people) == before
    # The first two orders' nonces were not consumed either: they are still fillable.
    for maker, order in zip(env.makers[:2], orders[:2], strict=True):
        word, mask = nonce_word_and_mask(order.nonce)
        assert env.signature_transfer.functions.nonceBitmap(maker.address, word).call() & mask == 0
    env.transact(taker, env.reactor.functions.executeBatch(signed[:2]))


def test_empty_batch_reverts(env: Env) -> None:
    env.expect_revert(env.taker, env.reactor.functions.executeBatch([]), "EmptyBatch")


def test_wrong_taker_reverts_and_bound_taker_fills(env: Env) -> None:
    maker = env.makers[0]
    order = env.order(
        maker.address, env.weth, WETH, env.usdc, 2_000 * USDC, taker=env.taker.address
    )
    env.approve(env.stranger, env.usdc, env.reactor.address)
    fill = env.reactor.functions.execute(env.signed(maker, order))
    before = env.balances([env.weth, env.usdc], [maker.address, env.stranger.address])

    env.expect_revert(env.stranger, fill, "WrongTaker")

    assert env.balances([env.weth, env.usdc], [maker.address, env.stranger.address]) == before
    env.transact(env.taker, fill)


def test_order_without_taker_is_fillable_by_anyone(env: Env) -> None:
    maker, stranger = env.makers[2], env.stranger
    order = env.order(maker.address, env.usdc, 700 * USDC, env.weth, WETH // 4, fee=10**15)
    env.approve(stranger, env.weth, env.reactor.address)
    stranger_usdc = env.balance(env.usdc, stranger.address)
    stranger_weth = env.balance(env.weth, stranger.address)

    receipt = env.transact(stranger, env.reactor.functions.execute(env.signed(maker, order)))

    assert env.balance(env.usdc, stranger.address) == stranger_usdc + 700 * USDC
    assert env.balance(env.weth, stranger.address) == stranger_weth - WETH // 4 - 10**15
    assert env.fill_events(receipt)[0]["taker"] == stranger.address


def test_expired_order_reverts(env: Env) -> None:
    maker = env.makers[0]
    order = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC, deadline=env.now() - 1)
    env.expect_revert(
        env.taker, env.reactor.functions.execute(env.signed(maker, order)), "DeadlinePassed"
    )


def test_deadline_is_inclusive(env: Env) -> None:
    maker = env.makers[0]
    deadline = env.now() + 100
    late = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC, deadline=deadline)
    on_time = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC, deadline=deadline)

    env.set_next_timestamp(deadline)
    env.transact(env.taker, env.reactor.functions.execute(env.signed(maker, on_time)))

    env.set_next_timestamp(deadline + 1)
    fill_late = env.reactor.functions.execute(env.signed(maker, late))
    receipt = env.send(env.taker, fill_late)
    assert receipt["status"] == 0
    assert env.revert_error(env.taker, fill_late) == "DeadlinePassed"


def test_nonce_reuse_reverts_with_invalid_nonce(env: Env) -> None:
    maker = env.makers[1]
    first = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC)
    signed_first = env.signed(maker, first)
    env.transact(env.taker, env.reactor.functions.execute(signed_first))

    # Replaying the very same signed order...
    env.expect_revert(env.taker, env.reactor.functions.execute(signed_first), "InvalidNonce")
    # ...and a different order signed with the same nonce both fail.
    second = env.order(
        maker.address, env.weth, WETH // 2, env.usdc, 1_000 * USDC, nonce=first.nonce
    )
    env.expect_revert(
        env.taker, env.reactor.functions.execute(env.signed(maker, second)), "InvalidNonce"
    )


def test_maker_cancels_early_by_invalidating_the_nonce(env: Env) -> None:
    maker = env.makers[2]
    order = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC)
    word, mask = nonce_word_and_mask(order.nonce)

    receipt = env.transact(
        maker, env.signature_transfer.functions.invalidateUnorderedNonces(word, mask)
    )

    [event] = env.events(env.signature_transfer, "UnorderedNonceInvalidation", receipt)
    assert event == {"owner": maker.address, "word": word, "mask": mask}
    assert env.signature_transfer.functions.nonceBitmap(maker.address, word).call() & mask == mask
    before = env.balances([env.weth, env.usdc], [maker.address, env.taker.address])
    env.expect_revert(
        env.taker, env.reactor.functions.execute(env.signed(maker, order)), "InvalidNonce"
    )
    assert env.balances([env.weth, env.usdc], [maker.address, env.taker.address]) == before


def test_order_for_another_reactor_reverts(env: Env) -> None:
    maker = env.makers[0]
    order = env.order(
        maker.address, env.weth, WETH, env.usdc, 2_000 * USDC, reactor=env.router.address
    )
    env.expect_revert(
        env.taker, env.reactor.functions.execute(env.signed(maker, order)), "WrongReactor"
    )


def test_tampered_order_fails_signature_check(env: Env) -> None:
    maker = env.makers[0]
    order = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC)
    signature = env.sign(maker, order)
    cheaper = env.order(maker.address, env.weth, WETH, env.usdc, 1_000 * USDC, nonce=order.nonce)
    env.expect_revert(
        env.taker,
        env.reactor.functions.execute((encode_order(cheaper), signature)),
        "InvalidSigner",
    )


def test_compact_eip2098_signature_fills(env: Env) -> None:
    maker = env.makers[0]
    order = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC)
    signature = env.sign(maker, order)
    r, s, v = signature[:32], int.from_bytes(signature[32:64], "big"), signature[64]
    compact = r + ((v - 27) << 255 | s).to_bytes(32, "big")
    env.transact(env.taker, env.reactor.functions.execute((encode_order(order), compact)))


def test_taker_without_allowance_reverts_with_token_error(env: Env) -> None:
    maker = env.makers[0]
    order = env.order(maker.address, env.weth, WETH, env.usdc, 2_000 * USDC)
    # The stranger never approved the reactor: TestERC20's error bubbles up unchanged.
    env.expect_revert(
        env.stranger,
        env.reactor.functions.execute(env.signed(maker, order)),
        "ERC20InsufficientAllowance",
    )


def test_input_token_without_code_is_rejected(env: Env) -> None:
    maker = env.makers[0]
    # An "ERC-20" at an address with no code would make a naive low-level call succeed.
    fake = env.contract("TestERC20", env.stranger.address)
    order = env.order(maker.address, fake, WETH, env.usdc, 2_000 * USDC)
    env.expect_revert(
        env.taker, env.reactor.functions.execute(env.signed(maker, order)), "TokenCallFailed"
    )
