"""SimulatedMaker and MakerFleet against the in-test stream server and an in-memory chain."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from eth_account import Account

from contracts.orders import recover_order_signer
from makers.chain import MAX_UINT256, ApprovalFailed
from makers.client import Backoff, MakerAuthError
from makers.config import FixedLatencyConfig, FleetConfig, MakerConfig
from makers.fleet import MakerFleet, SimulatedMaker
from makers.pricing import TokenSpec
from makers.protocol import Decline, Expired, Filled, Levels, Quote, Rfq, Welcome
from rfqkit.wallets import maker_wallet
from tests.unit.makers.fake_stream import (
    ADDR,
    FakeConnection,
    FakeStreamServer,
    now_ms,
    rfq,
    welcome,
)

USDT, NGNS = ADDR["USDT"], ADDR["NGNS"]
SPEC = {USDT: TokenSpec("USDT", 18), NGNS: TokenSpec("NGNS", 6)}
E18, E6 = 10**18, 10**6
FAST = Backoff(initial_s=0.01, max_s=0.05)


class FakeChain:
    """In-memory MakerChain: balances and allowances; USDT refuses nonzero -> nonzero."""

    def __init__(self, chain_id: int = 56) -> None:
        self.chain_id = chain_id
        self.symbols = {USDT: "USDT", NGNS: "NGNS"}
        self.balances: dict[tuple[str, str], int] = {}
        self.allowances: dict[tuple[str, str, str], int] = {}
        self.approvals: list[tuple[str, str, int]] = []  # (token, owner, amount)
        self.hashes = itertools.count(1)
        self.closed = False

    async def token_symbol(self, token: str) -> str:
        return self.symbols[token.lower()]

    async def balance_of(self, token: str, owner: str) -> int:
        return self.balances.get((token.lower(), owner.lower()), 0)

    async def allowance(self, token: str, owner: str, spender: str) -> int:
        return self.allowances.get((token.lower(), owner.lower(), spender.lower()), 0)

    async def approve(self, private_key: str, token: str, spender: str, amount: int) -> str:
        owner = Account.from_key(private_key).address.lower()
        key = (token.lower(), owner, spender.lower())
        if token.lower() == USDT and amount and self.allowances.get(key, 0):
            raise ApprovalFailed("USDT: nonzero -> nonzero")
        self.allowances[key] = amount
        self.approvals.append((token.lower(), owner, amount))
        return f"0x{next(self.hashes):064x}"

    async def close(self) -> None:
        self.closed = True

    def fund(self, owner: str, usdt: int, ngns: int) -> None:
        self.balances[(USDT, owner.lower())] = usdt
        self.balances[(NGNS, owner.lower())] = ngns


WALLETS = [maker_wallet(i) for i in range(3)]
KEYS = {f"tx_live_maker{i}": w.address for i, w in enumerate(WALLETS)}


def maker_config(name: str = "m0", index: int = 0, **changes: Any) -> MakerConfig:
    body: dict[str, Any] = {
        "name": name,
        "wallet_index": index,
        "chains": [56],
        "spread_bps": 10,
        "impact_bps": 20,
        "max_inventory_fraction": 1,
        "latency": FixedLatencyConfig(ms=0),
        **changes,
    }
    return MakerConfig.model_validate(body)


@pytest.fixture
def chain() -> FakeChain:
    fake = FakeChain()
    for wallet in WALLETS:
        fake.fund(wallet.address, usdt=1_000 * E18, ngns=1_000_000 * E6)
    return fake


@pytest.fixture
async def server() -> AsyncIterator[FakeStreamServer]:
    fake = FakeStreamServer(
        lambda key, wallet: welcome(wallet, reply_budget_ms=60), keys=dict(KEYS)
    )  # a copy: a test may revoke a key
    await fake.start()
    try:
        yield fake
    finally:
        await fake.close()


StartMaker = Callable[..., Awaitable[tuple[SimulatedMaker, FakeConnection]]]


@pytest.fixture
async def start_maker(server: FakeStreamServer, chain: FakeChain) -> AsyncIterator[StartMaker]:
    makers: list[SimulatedMaker] = []

    async def start(config: MakerConfig | None = None) -> tuple[SimulatedMaker, FakeConnection]:
        config = config or maker_config()
        assert config.wallet_index is not None
        maker = SimulatedMaker(
            config,
            url=server.url,
            api_keys=[f"tx_live_maker{config.wallet_index}"],
            chains={56: chain},
            backoff=FAST,
        )
        makers.append(maker)
        await maker.start(wait_s=10)
        return maker, await server.next_connection()

    try:
        yield start
    finally:
        for maker in makers:
            await maker.close()


async def until(conn: FakeConnection, predicate: Callable[[], bool]) -> None:
    """Round trips to the maker until `predicate` holds: its callbacks run in between."""
    for _ in range(100):
        if predicate():
            return
        await conn.barrier()
    raise AssertionError("condition never held")


def signer(quote: Quote, welcome: Welcome) -> str:
    return recover_order_signer(
        quote.order.to_order(),
        welcome.chains[0].chainId,
        welcome.chains[0].signatureTransfer,
        bytes.fromhex(quote.signature[2:]),
    )


async def levels_by_direction(conn: FakeConnection) -> dict[tuple[str, str], Levels]:
    seen: dict[tuple[str, str], Levels] = {}
    while len(seen) < 2:
        message = await conn.receive()
        if isinstance(message, Levels):
            seen[(message.sellToken.lower(), message.buyToken.lower())] = message
    return seen


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
        assert [(lv.sellAmount, lv.buyAmount) for lv in message.levels] == expected
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
    quote = await conn.expect(Quote)
    order = quote.order.to_order()
    inventory = 1_000_000 * E6
    assert order.inputAmount == maker.pricing.price_exact_input(
        SPEC[USDT], SPEC[NGNS], 10 * E18, inventory
    )
    assert 15_980 * E6 < order.inputAmount < 16_000 * E6
    assert (order.inputToken.lower(), order.outputToken.lower()) == (NGNS, USDT)
    assert order.outputAmount == 10 * E18
    assert order.feeAmount == request.feeAmount
    assert order.maker == WALLETS[0].address
    assert order.taker.lower() == ADDR["taker"]
    assert order.reactor.lower() == ADDR["reactor"]
    assert request.minExpiresAtMs <= quote.expiresAtMs <= request.maxExpiresAtMs
    assert order.deadline * 1000 >= quote.expiresAtMs
    assert signer(quote, conn.welcome) == WALLETS[0].address
    # The quote holds its inventory until the server lets go of it.
    assert maker.inventory(56, NGNS) == inventory - order.inputAmount
    await conn.send(Expired(quoteId=request.quoteId, rfqId=request.rfqId))
    await until(conn, lambda: not maker.commitments)
    assert maker.inventory(56, NGNS) == inventory


async def test_exact_output_quote_signs_the_fee_rule(start_maker: StartMaker) -> None:
    maker, conn = await start_maker()
    request = rfq(conn.welcome, sell=NGNS, buy=USDT, kind="exact_output", amount=E18)
    await conn.send(request)
    quote = await conn.expect(Quote)
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
    assert decline.maxSellAmount == depth
    assert 1_600_000 * E6 < depth < 1_602_000 * E6  # 1000 USDT at 1600 less spread


async def test_a_foreign_reactor_is_rejected(start_maker: StartMaker) -> None:
    _, conn = await start_maker()
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18, reactor="0x" + "99" * 20))
    assert (await conn.expect(Decline)).reason == "rejected"


async def test_nonces_are_unique(start_maker: StartMaker) -> None:
    maker, conn = await start_maker()
    for i in range(20):
        await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18, quote_id=f"mq_{i}"))
    quotes = [await conn.expect(Quote) for _ in range(20)]
    nonces = {q.order.nonce for q in quotes}
    assert len(nonces) == 20
    assert all(0 < n < 2**248 for n in nonces)
    assert len(maker.commitments) == 20


async def test_silent_never_answers(start_maker: StartMaker) -> None:
    maker, conn = await start_maker(maker_config(behaviour="silent"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    await until(conn, lambda: maker.stats.silent == 1)
    assert [m for m in await conn.barrier() if not isinstance(m, Levels)] == []


async def test_decline_behaviour_names_a_smaller_size(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="decline"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=10 * E18))
    decline = await conn.expect(Decline)
    assert decline.reason == "liquidity"
    assert decline.maxSellAmount == 5 * E18


async def test_bad_signature_does_not_recover_to_the_wallet(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="bad_signature"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    quote = await conn.expect(Quote)
    assert quote.order.maker == WALLETS[0].address
    assert signer(quote, conn.welcome) != WALLETS[0].address


async def test_underfunded_quotes_more_than_it_holds(
    chain: FakeChain, start_maker: StartMaker
) -> None:
    chain.fund(WALLETS[0].address, usdt=1_000 * E18, ngns=1_000 * E6)
    _, conn = await start_maker(maker_config(behaviour="underfunded"))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=2 * E18))
    quote = await conn.expect(Quote)
    assert quote.order.inputAmount > 1_000 * E6  # about 3198 NGNS from a 1000 NGNS balance


async def test_flaky_declines_its_fraction(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="flaky", flaky_decline_fraction=1.0))
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    assert (await conn.expect(Decline)).reason == "unavailable"


async def test_late_answers_after_reply_by(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(behaviour="late"))
    request = rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18, reply_budget_ms=60)
    await conn.send(request)
    while True:
        arrived, message = await conn.receive_timed()
        if isinstance(message, Quote):
            break
    assert arrived > request.replyByMs


async def test_latency_delays_the_answer(start_maker: StartMaker) -> None:
    _, conn = await start_maker(maker_config(latency={"kind": "fixed", "ms": 80}))
    sent = now_ms()
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    while True:
        arrived, message = await conn.receive_timed()
        if isinstance(message, Quote):
            break
    assert arrived - sent >= 75


async def test_a_fill_refreshes_balances_and_releases_the_commitment(
    chain: FakeChain, start_maker: StartMaker
) -> None:
    maker, conn = await start_maker()
    request = rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18)
    await conn.send(request)
    order = (await conn.expect(Quote)).order.to_order()
    owner = WALLETS[0].address
    chain.fund(owner, usdt=1_001 * E18, ngns=1_000_000 * E6 - order.inputAmount)
    await conn.send(
        Filled(
            quoteId=request.quoteId,
            rfqId=request.rfqId,
            chainId=56,
            orderHash="0x" + "ab" * 32,
            txHash="0x" + "cd" * 32,
            makerGave=order.inputAmount,
            makerReceived=order.outputAmount,
            feeAmount=order.feeAmount,
        )
    )
    await until(conn, lambda: maker.stats.filled == 1 and not maker.commitments)
    assert maker.inventory(56, NGNS) == 1_000_000 * E6 - order.inputAmount
    assert maker.inventory(56, USDT) == 1_001 * E18


async def test_reconfigure_live_behaviour_and_online(
    server: FakeStreamServer, start_maker: StartMaker
) -> None:
    maker, conn = await start_maker()
    await maker.reconfigure(behaviour="decline", spread_bps=50)
    await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
    assert (await conn.expect(Decline)).reason == "liquidity"
    assert maker.pricing.params.spread_bps == 50
    await maker.reconfigure(online=False)
    await asyncio.wait_for(conn.closed.wait(), 10)
    assert not maker.connected
    await maker.reconfigure(online=True, behaviour="normal")
    again = await server.next_connection()
    assert maker.connected
    await again.send(rfq(again.welcome, sell=USDT, buy=NGNS, amount=E18, quote_id="mq_2"))
    assert (await again.expect(Quote)).quoteId == "mq_2"
    with pytest.raises(ValueError, match="cannot change"):
        await maker.reconfigure(wallet_index=2)
    assert maker.status()["behaviour"] == "normal"


async def test_fleet_runs_makers_reconfigures_and_closes(
    server: FakeStreamServer, chain: FakeChain
) -> None:
    config = FleetConfig(makers=(maker_config("a", 0), maker_config("b", 1, online=False)), seed=5)
    fleet = MakerFleet(
        config,
        url=server.url,
        credentials={"a": ["tx_live_maker0"], "b": ["tx_live_maker1"]},
        rpc_urls={},
        chains={56: chain},
        backoff=FAST,
    )
    async with fleet:
        status = {s["name"]: s for s in fleet.status()}
        assert status["a"]["connected"]
        assert status["a"]["chains"] == [56]
        assert not status["b"]["connected"]
        assert len(server.connections) == 1
        await fleet.reconfigure("b", online=True)
        assert fleet.maker("b").connected
        assert len(server.connections) == 2
        with pytest.raises(KeyError, match="no maker named"):
            fleet.maker("zulu")
    assert all(c.closed.is_set() for c in server.connections)
    assert not chain.closed  # the caller's chain access is the caller's to close


async def test_fleet_needs_a_credential_per_maker(server: FakeStreamServer) -> None:
    with pytest.raises(ValueError, match="no maker credential for b"):
        MakerFleet(
            FleetConfig(makers=(maker_config("a", 0), maker_config("b", 1))),
            url=server.url,
            credentials={"a": ["k"]},
            rpc_urls={},
        )


def test_rfq_helper_is_valid() -> None:
    request = rfq(welcome(WALLETS[0].address), sell=USDT, buy=NGNS, amount=E18)
    assert isinstance(request, Rfq)


async def test_going_online_with_a_refused_key_stays_offline(
    server: FakeStreamServer, start_maker: StartMaker
) -> None:
    maker, _ = await start_maker()
    await maker.reconfigure(online=False)
    del server.keys["tx_live_maker0"]  # revoked meanwhile
    with pytest.raises(MakerAuthError):
        await maker.reconfigure(online=True)
    assert not maker.config.online
    assert not maker.connected


async def quiet_maker(
    server: FakeStreamServer, chain: FakeChain, config: MakerConfig
) -> tuple[SimulatedMaker, FakeConnection]:
    """A started maker whose periodic full rounds are a minute apart, after its start-up
    rounds settled."""
    maker = SimulatedMaker(
        config,
        url=server.url,
        api_keys=["tx_live_maker0"],
        chains={56: chain},
        backoff=FAST,
        publish_interval_s=60,
    )
    await maker.start(wait_s=10)
    conn = await server.next_connection()
    await levels_by_direction(conn)
    await asyncio.sleep(0.05)
    await conn.barrier()
    return maker, conn


async def test_a_quote_republishes_only_the_direction_it_changed(
    server: FakeStreamServer, chain: FakeChain
) -> None:
    maker, conn = await quiet_maker(server, chain, maker_config())
    try:
        inventory = 1_000_000 * E6
        request = rfq(conn.welcome, sell=USDT, buy=NGNS, amount=10 * E18)
        await conn.send(request)
        seen: list[Levels] = []
        while not isinstance(message := await conn.receive(), Quote):
            assert isinstance(message, Levels)
            seen.append(message)
        seen += [m for m in await conn.barrier() if isinstance(m, Levels)]
        gives = message.order.inputAmount
        assert maker.commitments[request.quoteId].amount == gives
        assert [(m.sellToken.lower(), m.buyToken.lower()) for m in seen] == [(USDT, NGNS)]
        assert [(lv.sellAmount, lv.buyAmount) for lv in seen[0].levels] == maker.pricing.levels(
            SPEC[USDT], SPEC[NGNS], inventory - gives
        )
        await conn.send(Expired(quoteId=request.quoteId, rfqId=request.rfqId))
        await until(conn, lambda: not maker.commitments)
        back = [m for m in await conn.barrier() if isinstance(m, Levels)]
        assert [(m.sellToken.lower(), m.buyToken.lower()) for m in back] == [(USDT, NGNS)]
        assert [(lv.sellAmount, lv.buyAmount) for lv in back[-1].levels] == maker.pricing.levels(
            SPEC[USDT], SPEC[NGNS], inventory
        )
    finally:
        await maker.close()


async def test_levels_a_quote_does_not_change_are_not_republished(
    server: FakeStreamServer, chain: FakeChain
) -> None:
    # An underfunded maker shows a multiple of its balance whatever it has committed.
    maker, conn = await quiet_maker(server, chain, maker_config(behaviour="underfunded"))
    try:
        await conn.send(rfq(conn.welcome, sell=USDT, buy=NGNS, amount=E18))
        await conn.expect(Quote)
        assert len(maker.commitments) == 1
        assert [m for m in await conn.barrier() if isinstance(m, Levels)] == []
    finally:
        await maker.close()
