"""A SimulatedMaker on a real Anvil chain with the venue deployed (`deploy_venue`): it approves
the signature-transfer contract itself, and the order it signs for an rfq settles through
`RfqReactor.execute` sent by a demo taker, with exact balance changes. The venue's side of the
stream is the in-test server (the simulator's own is tested with the simulator)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from eth_abi.abi import encode
from eth_utils.abi import function_signature_to_4byte_selector

from contracts.orders import RfqOrder, encode_order
from makers.chain import MAX_UINT256
from makers.client import Backoff
from makers.config import FixedLatencyConfig, MakerConfig
from makers.fleet import SimulatedMaker
from rfqkit.maker_protocol import Filled, MakerQuote
from rfqkit.wallets import FEE_RECIPIENT, demo_wallet, maker_wallet
from tests.integration.makers.venue import CHAIN_ID, Venue
from tests.unit.makers.fake_stream import FakeConnection, FakeStreamServer, rfq

pytestmark = pytest.mark.integration

E18, E6 = 10**18, 10**6
EXECUTE = function_signature_to_4byte_selector("execute((bytes,bytes))")
MAKER = maker_wallet(0)
TAKER = demo_wallet(0)
KEY = "tx_live_integration_maker"


@pytest.fixture
async def stream(venue: Venue) -> AsyncIterator[FakeStreamServer]:
    server = FakeStreamServer(lambda key, wallet: venue.welcome(wallet), {KEY: MAKER.address})
    await server.start()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def maker(venue: Venue, stream: FakeStreamServer) -> AsyncIterator[SimulatedMaker]:
    config = MakerConfig(
        name="integration",
        wallet_index=0,
        chains=(CHAIN_ID,),
        max_inventory_fraction=Decimal(1),
        latency=FixedLatencyConfig(ms=0),
    )
    # A leftover nonzero USDT allowance: the maker must reset it to 0 before approving max.
    # (The deployment pre-approves max for the maker wallets; go 0 first, as USDT demands.)
    usdt = venue.token("USDT")
    await venue.approve(MAKER, usdt, venue.deployment.contracts.signature_transfer, 0)
    await venue.approve(MAKER, usdt, venue.deployment.contracts.signature_transfer, 5)
    simulated = SimulatedMaker(
        config,
        url=stream.url,
        api_keys=[KEY],
        rpc_urls={CHAIN_ID: venue.rpc_url},
        backoff=Backoff(initial_s=0.01, max_s=0.05),
    )
    try:
        await simulated.start(wait_s=30)
        yield simulated
    finally:
        await simulated.close()


async def settle(venue: Venue, quote: MakerQuote) -> None:
    order = quote.order.to_order()
    signed = (encode_order(order), bytes.fromhex(quote.signature[2:]))
    data = EXECUTE + encode(["(bytes,bytes)"], [signed])
    await venue.send(TAKER, venue.deployment.contracts.reactor, data)


async def snapshot_balances(venue: Venue, tokens: list[str]) -> dict[tuple[str, str], int]:
    owners = [MAKER.address, TAKER.address, FEE_RECIPIENT.address]
    return {(t, o): await venue.balance(t, o) for t in tokens for o in owners}


def assert_settled(
    before: dict[tuple[str, str], int],
    after: dict[tuple[str, str], int],
    order: RfqOrder,
) -> None:
    gives, receives = order.inputToken, order.outputToken
    change = {key: after[key] - before[key] for key in before}
    assert change == {
        (gives, MAKER.address): -order.inputAmount,
        (gives, TAKER.address): order.inputAmount,
        (gives, FEE_RECIPIENT.address): 0,
        (receives, MAKER.address): order.outputAmount,
        (receives, TAKER.address): -(order.outputAmount + order.feeAmount),
        (receives, FEE_RECIPIENT.address): order.feeAmount,
    }


async def next_quote(conn: FakeConnection) -> MakerQuote:
    return await conn.expect(MakerQuote)


async def test_maker_approves_the_signature_transfer_on_start(
    venue: Venue, maker: SimulatedMaker
) -> None:
    spender = venue.deployment.contracts.signature_transfer
    for symbol in ("USDT", "NGNS"):
        assert await venue.allowance(venue.token(symbol), MAKER.address, spender) == MAX_UINT256
    assert maker.inventory(CHAIN_ID, venue.token("USDT")) == await venue.balance(
        venue.token("USDT"), MAKER.address
    )


async def test_exact_input_order_settles_through_the_reactor(
    venue: Venue, stream: FakeStreamServer, maker: SimulatedMaker
) -> None:
    conn = await stream.next_connection()
    usdt, ngns = venue.token("USDT"), venue.token("NGNS")
    # The taker sells 1600 NGNS (+ 5 bps fee) for USDT, the USDT-like token the maker gives.
    request = rfq(conn.welcome, sell=ngns, buy=usdt, amount=1600 * E6, taker=TAKER.address)
    await conn.send(request)
    quote = await next_quote(conn)
    order = quote.order.to_order()
    assert order.outputAmount == 1600 * E6
    assert order.feeAmount == 800_000
    assert 0.998 * E18 < order.inputAmount < E18
    await venue.approve(TAKER, ngns, venue.deployment.contracts.reactor, MAX_UINT256)
    before = await snapshot_balances(venue, [usdt, ngns])
    await settle(venue, quote)
    assert_settled(before, await snapshot_balances(venue, [usdt, ngns]), order)
    # The maker learns of the fill and re-reads its real balance.
    await conn.send(
        Filled(
            quote_id=request.quote_id,
            rfq_id=request.rfq_id,
            chain_id=CHAIN_ID,
            order_hash="0x" + "00" * 32,
            tx_hash="0x" + "00" * 32,
            maker_gave=order.inputAmount,
            maker_received=order.outputAmount,
            fee_amount=order.feeAmount,
        )
    )
    while maker.commitments:
        await conn.barrier()
    assert maker.inventory(CHAIN_ID, usdt) == await venue.balance(usdt, MAKER.address)


async def test_exact_output_order_settles_through_the_reactor(
    venue: Venue, stream: FakeStreamServer, maker: SimulatedMaker
) -> None:
    conn = await stream.next_connection()
    usdt, ngns = venue.token("USDT"), venue.token("NGNS")
    # The taker buys exactly 1000 NGNS with USDT; USDT approve from zero works once.
    request = rfq(
        conn.welcome,
        sell=usdt,
        buy=ngns,
        kind="exact_output",
        amount=1000 * E6,
        taker=TAKER.address,
    )
    await conn.send(request)
    quote = await next_quote(conn)
    order = quote.order.to_order()
    assert order.inputAmount == 1000 * E6
    assert order.feeAmount == order.outputAmount * 5 // 10_000
    assert 0.625 * E18 < order.outputAmount < 0.627 * E18
    await venue.approve(TAKER, usdt, venue.deployment.contracts.reactor, MAX_UINT256)
    before = await snapshot_balances(venue, [usdt, ngns])
    await settle(venue, quote)
    assert_settled(before, await snapshot_balances(venue, [usdt, ngns]), order)
