"""The aggregator path: a user's own transaction calls the router, the router fills quotes bound
to it through the reactor and hands the proceeds to the user."""

from __future__ import annotations

import pytest
from eth_account.signers.local import LocalAccount

from contracts.orders import RfqOrder
from tests.integration.contracts.env import Env

pytestmark = pytest.mark.integration

WETH = 10**18
USDC = 10**6


def _router_quote(
    env: Env, maker: LocalAccount, give_weth: int, get_usdc: int, fee: int
) -> RfqOrder:
    return env.order(
        maker.address, env.weth, give_weth, env.usdc, get_usdc, fee=fee, taker=env.router.address
    )


def test_user_swaps_through_router_and_router_keeps_nothing(env: Env) -> None:
    user, router = env.user, env.router
    orders = [
        _router_quote(env, env.makers[0], WETH, 2_000 * USDC, 2 * USDC),
        _router_quote(env, env.makers[1], WETH // 2, 1_001 * USDC, USDC),
    ]
    signed = [env.signed(m, o) for m, o in zip(env.makers[:2], orders, strict=True)]
    cost = 3_004 * USDC  # outputs plus fees
    amount_in = cost + 17  # a little more than needed: the excess must come back
    env.approve(user, env.usdc, router.address, amount_in)
    people = [user.address, router.address, *(m.address for m in env.makers[:2])]
    people.append(env.fee_recipient.address)
    before = env.balances([env.weth, env.usdc], people)

    swap = router.functions.swap(
        env.reactor.address, signed, env.usdc.address, amount_in, env.weth.address, WETH * 3 // 2
    )
    assert swap.call({"from": user.address}) == WETH * 3 // 2
    receipt = env.transact(user, swap)

    after = env.balances([env.weth, env.usdc], people)
    weth, usdc = env.weth.address, env.usdc.address
    assert after[(weth, user.address)] == before[(weth, user.address)] + WETH * 3 // 2
    assert after[(usdc, user.address)] == before[(usdc, user.address)] - cost
    assert (
        after[(usdc, env.makers[0].address)] == before[(usdc, env.makers[0].address)] + 2_000 * USDC
    )
    assert (
        after[(usdc, env.makers[1].address)] == before[(usdc, env.makers[1].address)] + 1_001 * USDC
    )
    fee_to = env.fee_recipient.address
    assert after[(usdc, fee_to)] == before[(usdc, fee_to)] + 3 * USDC
    assert after[(weth, router.address)] == 0
    assert after[(usdc, router.address)] == 0
    assert env.usdc.functions.allowance(router.address, env.reactor.address).call() == 0
    assert env.usdc.functions.allowance(user.address, router.address).call() == 0

    fills = env.fill_events(receipt)
    assert [f["taker"] for f in fills] == [router.address, router.address]
    [swapped] = env.events(router, "Swap", receipt)
    assert swapped == {
        "user": user.address,
        "reactor": env.reactor.address,
        "tokenIn": usdc,
        "amountIn": cost,
        "tokenOut": weth,
        "amountOut": WETH * 3 // 2,
    }


def test_router_reverts_below_min_out(env: Env) -> None:
    user = env.user
    order = _router_quote(env, env.makers[0], WETH, 2_000 * USDC, 0)
    env.approve(user, env.usdc, env.router.address)
    before = env.balances([env.weth, env.usdc], [user.address, env.makers[0].address])
    swap = env.router.functions.swap(
        env.reactor.address,
        [env.signed(env.makers[0], order)],
        env.usdc.address,
        2_000 * USDC,
        env.weth.address,
        WETH + 1,
    )
    env.expect_revert(user, swap, "InsufficientOutput")
    assert env.balances([env.weth, env.usdc], [user.address, env.makers[0].address]) == before


def test_router_bound_quote_cannot_be_filled_by_the_user_directly(env: Env) -> None:
    order = _router_quote(env, env.makers[0], WETH, 2_000 * USDC, 0)
    env.approve(env.user, env.usdc, env.reactor.address)
    env.expect_revert(
        env.user, env.reactor.functions.execute(env.signed(env.makers[0], order)), "WrongTaker"
    )


def test_router_rejects_same_token_swap(env: Env) -> None:
    order = _router_quote(env, env.makers[0], WETH, 2_000 * USDC, 0)
    swap = env.router.functions.swap(
        env.reactor.address,
        [env.signed(env.makers[0], order)],
        env.usdc.address,
        1,
        env.usdc.address,
        0,
    )
    env.expect_revert(env.user, swap, "SameToken")
