"""TestUSDT's mainnet quirks, and settlement through them (the reactor, the signature-transfer
contract and the router must all cope with tokens that return no bool)."""

from __future__ import annotations

import pytest

from tests.integration.contracts.env import Env

pytestmark = pytest.mark.integration

WETH = 10**18
USDT = 10**6


def test_approve_nonzero_to_nonzero_reverts_and_reset_then_set_works(env: Env) -> None:
    owner, spender, usdt = env.stranger, env.reactor.address, env.usdt
    env.approve(owner, usdt, spender, 100 * USDT)

    # Like mainnet USDT: a bare revert, no reason, no custom error.
    env.expect_revert(owner, usdt.functions.approve(spender, 50 * USDT), "<empty>")
    assert usdt.functions.allowance(owner.address, spender).call() == 100 * USDT

    env.approve(owner, usdt, spender, 0)
    env.approve(owner, usdt, spender, 50 * USDT)
    assert usdt.functions.allowance(owner.address, spender).call() == 50 * USDT


def test_usdt_functions_return_no_data(env: Env) -> None:
    owner = env.stranger
    for fn in (
        env.usdt.functions.transfer(env.user.address, 1),
        env.usdt.functions.approve(env.user.address, 1),
    ):
        result = env.rpc(
            "eth_call",
            [
                {
                    "from": owner.address,
                    "to": env.usdt.address,
                    "data": "0x" + env.calldata(fn).hex(),
                },
                "latest",
            ],
        )
        assert result == "0x"


def test_fill_with_usdt_on_both_sides_of_the_reactor(env: Env) -> None:
    taker = env.stranger
    env.approve(taker, env.usdt, env.reactor.address, 10_000 * USDT)
    env.approve(taker, env.weth, env.reactor.address)
    # Taker pays USDT (reactor's transferFrom, no return value).
    buy_weth = env.order(
        env.makers[0].address, env.weth, WETH, env.usdt, 2_000 * USDT, fee=2 * USDT
    )
    # Maker gives USDT (signature-transfer contract's transferFrom, no return value).
    sell_weth = env.order(env.makers[1].address, env.usdt, 1_990 * USDT, env.weth, WETH)
    people = [
        taker.address,
        env.makers[0].address,
        env.makers[1].address,
        env.fee_recipient.address,
    ]
    before = env.balances([env.weth, env.usdt], people)

    env.transact(
        taker,
        env.reactor.functions.executeBatch(
            [env.signed(env.makers[0], buy_weth), env.signed(env.makers[1], sell_weth)]
        ),
    )

    after = env.balances([env.weth, env.usdt], people)
    weth, usdt = env.weth.address, env.usdt.address
    assert (
        after[(usdt, taker.address)] == before[(usdt, taker.address)] - 2_002 * USDT + 1_990 * USDT
    )
    assert after[(weth, taker.address)] == before[(weth, taker.address)]
    assert (
        after[(usdt, env.makers[0].address)] == before[(usdt, env.makers[0].address)] + 2_000 * USDT
    )
    assert (
        after[(usdt, env.makers[1].address)] == before[(usdt, env.makers[1].address)] - 1_990 * USDT
    )
    assert (
        after[(usdt, env.fee_recipient.address)]
        == before[(usdt, env.fee_recipient.address)] + 2 * USDT
    )
    # The allowance was drawn down exactly (USDT does not treat it as infinite unless max).
    assert env.usdt.functions.allowance(taker.address, env.reactor.address).call() == 7_998 * USDT


def test_failed_usdt_pull_reverts_the_fill(env: Env) -> None:
    taker = env.stranger
    env.approve(taker, env.usdt, env.reactor.address, 10 * USDT)  # too small
    order = env.order(env.makers[0].address, env.weth, WETH, env.usdt, 2_000 * USDT)
    # USDT reverts without data, so the reactor's safe-transfer helper names the token.
    env.expect_revert(
        taker, env.reactor.functions.execute(env.signed(env.makers[0], order)), "TokenCallFailed"
    )


def test_router_swaps_usdt_in_repeatedly(env: Env) -> None:
    user, router = env.user, env.router
    env.approve(user, env.usdt, router.address, 0)
    env.approve(user, env.usdt, router.address, 10**6 * USDT)
    for i in range(2):  # the second swap proves the router's allowance handling is USDT-safe
        maker = env.makers[i]
        order = env.order(
            maker.address, env.weth, WETH, env.usdt, 2_000 * USDT, fee=USDT, taker=router.address
        )
        user_weth = env.balance(env.weth, user.address)
        user_usdt = env.balance(env.usdt, user.address)
        env.transact(
            user,
            router.functions.swap(
                env.reactor.address,
                [env.signed(maker, order)],
                env.usdt.address,
                2_001 * USDT,
                env.weth.address,
                WETH,
            ),
        )
        assert env.balance(env.weth, user.address) == user_weth + WETH
        assert env.balance(env.usdt, user.address) == user_usdt - 2_001 * USDT
        assert env.balance(env.usdt, router.address) == 0
        assert env.usdt.functions.allowance(router.address, env.reactor.address).call() == 0
