"""A SimulatedMaker against the in-test stream server and an in-memory chain, answering as a
normal maker: at start it approves the SignatureTransfer contract once (resetting a USDT
allowance first) and publishes its levels; it prices, signs and holds exact-input quotes,
signs the fee rule of exact-output ones, declines what its depth cannot cover and a foreign
reactor, never reuses a nonce, and a fill refreshes its balances and releases the commitment."""

from __future__ import annotations

from makers.chain import MAX_UINT256
from rfqkit.maker_protocol import Decline, Expired, Filled, MakerQuote, Rfq
from tests.unit.makers.fake_stream import ADDR, rfq, welcome
from tests.unit.makers.fleet.fakes import (
    E6,
    E18,
    NGNS,
    SPEC,
    USDT,
    WALLETS,
    FakeChain,
    StartMaker,
    levels_by_direction,
    signer,
    until,
)


async def test_start_approves_the_signature_transfer_and_publishes_levels(
    chain: FakeChain, start_maker: StartMaker
) -> None:
    owner = WALLETS[0].address.lower()
    spender = ADDR["signature_transfer"]
    chain.allowances[(USDT, owner, spender)] = 5  # a USDT allowance left over: reset first
    maker, conn = await start_maker()
    assert sorted(chain.approvals) == sorted(
        [(USDT, owner, 0), (USDT, owner, MAX_UINT256), (NGNS, owner, MAX_UINT256)]
    )
    assert chain.approvals.index((USDT, owner, 0)) < chain.approvals.index(
        (USDT, owner, MAX_UINT256)
    )
    levels = await levels_by_direction(conn)
    for (sell, buy), message in levels.items():
        expected = maker.pricing.levels(SPEC[sell], SPEC[buy], await chain.balance_of(buy, owner))
        assert [(lv.sell_amount, lv.buy_amount) for lv in message.levels] == expected
        assert 1 <= len(expected) <= 9


async def test_an_existing_max_approval_is_left_alone(
    chain: FakeChain, start_maker: StartMaker
) -> None:
    owner = WALLETS[0].address.lower()
    for token in (USDT, NGNS):
        chain.allowances[(token, owner, ADDR["signature_transfer"])] = MAX_UINT256
    await start_maker()
    assert chain.approvals == []


async def test_exact_input_quote_is_priced_signed_and_held(
    chain: FakeChain, start_maker: StartMaker
) -> None:
    maker, conn = await start_maker()
    request = rfq(conn.welcome, sell=USDT, buy=NGNS, amount=10 * E18)
    await conn.send(request)
    quote = await conn.expect(MakerQuote)
    order = quote.order.to_order()
    inventory = 1_000_000 * E6
    assert order.inputAmount == maker.pricing.price_exact_input(
        SPEC[USDT], SPEC[NGNS], 10 * E18, inventory
    )
    assert 15_980 * E6 < order.inputAmount < 16_000 * E6
    assert (order.inputToken.lower(), order.outputToken.lower()) == (NGNS, USDT)
    assert order.outputAmount == 10 * E18
    assert order.feeAmount == request.fee_amount
    assert order.maker == WALLETS[0].address
    assert order.taker.lower() == ADDR["taker"]
    assert order.reactor.lower() == ADDR["reactor"]
    assert request.min_expires_at_ms <= quote.expires_at_ms <= request.max_expires_at_ms
    assert order.deadline * 1000 >= quote.expires_at_ms
    assert signer(quote, conn.welcome) == WALLETS[0].address
    # The quote holds its inventory until the server lets go of it.
    assert maker.inventory(56, NGNS) == inventory - order.inputAmount
    await conn.send(Expired(quote_id=request.quote_id, rfq_id=request.rfq_id))
    await until(conn, lambda: not maker.commitments)
    assert maker.inventory(56, NGNS) == inventory


async def test_exact_output_quote_signs_the_fee_rule(start_maker: StartMaker) -> None:
    maker, conn = await start_maker()
    request = rfq(conn.welcome, sell=NGNS, buy=USDT, kind="exact_output", amount=E18)
    await conn.send(request)
    quote = await conn.expect(MakerQuote)
    order = quote.order.to_order()
    assert order.inputAmount == E18
    receives = maker.pricing.price_exact_output(SPEC[NGNS], SPEC[USDT], E18, 1_000 * E18)
    assert order.outputAmount == receives
    assert order.feeAmount == order.outputAmount * 5 // 10_000
    assert 1600 * E6 < order.outputAmount < 1610 * E6


async def test_too_large_is_declined_with_the_depth(start_maker: StartMaker) -> None:
    maker, conn = await start_maker()
    await conn.send(rfq(conn.welcome, sell=NGNS, buy=USDT, amount=2_000_000 * E6))
    decline = await conn.expect(Decline)
    depth = maker.pricing.depth(SPEC[NGNS], SPEC[USDT], 1_000 * E18)
    assert decline.reason == "liquidity"
    assert decline.max_sell_amount == depth
    assert 1_600_000 * E6 < depth < 1_602_000 * E6  # 1000 USDT at 1600 less spread


async def test_a_foreign_reactor_is_rejected(start_maker: StartMaker) -> None:
    _, conn = await start_maker()
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18, reactor="0x" + "99" * 20))
    assert (await conn.expect(Decline)).reason == "rejected"


async def test_nonces_are_unique(start_maker: StartMaker) -> None:
    maker, conn = await start_maker()
    for i in range(20):
        await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18, quote_id=f"mq_{i}"))
    quotes = [await conn.expect(MakerQuote) for _ in range(20)]
    nonces = {q.order.nonce for q in quotes}
    assert len(nonces) == 20
    assert all(0 < n < 2**248 for n in nonces)
    assert len(maker.commitments) == 20


async def test_a_fill_refreshes_balances_and_releases_the_commitment(
    chain: FakeChain, start_maker: StartMaker
) -> None:
    maker, conn = await start_maker()
    request = rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18)
    await conn.send(request)
    order = (await conn.expect(MakerQuote)).order.to_order()
    owner = WALLETS[0].address
    chain.fund(owner, usdt=1_001 * E18, ngns=1_000_000 * E6 - order.inputAmount)
    await conn.send(
        Filled(
            quote_id=request.quote_id,
            rfq_id=request.rfq_id,
            chain_id=56,
            order_hash="0x" + "ab" * 32,
            tx_hash="0x" + "cd" * 32,
            maker_gave=order.inputAmount,
            maker_received=order.outputAmount,
            fee_amount=order.feeAmount,
        )
    )
    await until(conn, lambda: maker.stats.filled == 1 and not maker.commitments)
    assert maker.inventory(56, NGNS) == 1_000_000 * E6 - order.inputAmount
    assert maker.inventory(56, USDT) == 1_001 * E18


def test_rfq_helper_is_valid() -> None:
    request = rfq(welcome(WALLETS[0].address), sell=USDT, buy=NGNS, amount=E18)
    assert isinstance(request, Rfq)
