"""Bundles (several makers' orders composing one quote when no single maker covers the size,
docs/decisions.md R7) and the reply budget: answers after it are not used, and the request
answers at the budget however long a maker stays silent."""

from __future__ import annotations

from rfqkit.wallets import maker_wallet
from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.amounts import fee_on, net_of_fee
from tests.unit.services.rfq.harness import (
    NGNS,
    ONE,
    RATE,
    TIMING,
    FakeMaker,
    RfqHarness,
)

BUDGET_S = TIMING.reply_budget_ms / 1000


def legs_by_maker(record: StoredRfq) -> dict[str, tuple[int, int]]:
    assert record.quote is not None
    return {o.maker: (o.maker_receives, o.maker_gives) for o in record.quote.orders}


async def test_exact_input_bundle_composes_one_quote_from_two_makers(rfq: RfqHarness) -> None:
    cheap = rfq.maker(1, rate=RATE * 2, depth=60 * ONE, life_ms=10_000)
    dear = rfq.maker(2, rate=RATE, depth=60 * ONE, life_ms=20_000)
    record = (await rfq.request(sell=100 * ONE)).record
    assert record.status == "quoted"
    quote = record.quote
    assert quote is not None
    net = net_of_fee(100 * ONE, 5)
    # The better-priced maker's whole depth first, the rest from the other one.
    assert legs_by_maker(record) == {
        cheap.wallet.address: (60 * ONE, int(60 * ONE * RATE * 2)),
        dear.wallet.address: (net - 60 * ONE, int((net - 60 * ONE) * RATE)),
    }
    assert quote.taker_pays == sum(o.maker_receives + o.fee_amount for o in quote.orders)
    assert quote.taker_pays <= 100 * ONE
    assert quote.fee_amount == fee_on(60 * ONE, 5) + fee_on(net - 60 * ONE, 5)
    # Each maker was asked for the full size (and declined), then for its leg.
    assert [r["makerReceives"] for r in cheap.rfqs()] == [str(net), str(60 * ONE)]
    assert [r["makerReceives"] for r in dear.rfqs()] == [str(net), str(net - 60 * ONE)]
    by_maker = {o.maker: o for o in quote.orders}
    first, second = by_maker[cheap.wallet.address], by_maker[dear.wallet.address]
    assert quote.expires_at == min(first.expires_at, second.expires_at) == first.expires_at
    assert quote.order_deadline == first.deadline
    assert quote.latest_order_deadline == second.deadline > first.deadline
    assert record.routing.open_market_quotes_received == 2
    # Both legs are held, and the taker's reservation covers exactly what the bundle can take.
    for order in quote.orders:
        assert rfq.inventory.committed(97, order.maker, NGNS.address) == order.maker_gives
    assert await rfq.funds.committed(97, record.taker, record.sell_token) == quote.taker_pays


async def test_exact_output_bundle_splits_the_buy_amount(rfq: RfqHarness) -> None:
    one = rfq.maker(1, depth=60 * ONE)
    two = rfq.maker(2, depth=60 * ONE)
    wanted = 150_000 * 10**6  # 100 USDT worth, 90 000 NGNS of depth each
    record = (await rfq.request(sell=None, buy=wanted)).record
    assert record.status == "quoted"
    assert record.quote is not None
    gives = {maker: leg[1] for maker, leg in legs_by_maker(record).items()}
    assert set(gives) == {one.wallet.address, two.wallet.address}
    assert sum(gives.values()) == record.quote.buy_amount == wanted
    assert one.rfqs()[0]["makerGives"] == str(wanted)
    assert all(r["makerReceives"] is None for m in (one, two) for r in m.rfqs())


async def test_a_bundle_needs_every_leg_valid(rfq: RfqHarness) -> None:
    good = rfq.maker(1, rate=RATE * 2, depth=60 * ONE)
    bad = rfq.maker(2, depth=60 * ONE, signer=maker_wallet(9).private_key)
    outcome = await rfq.request(sell=100 * ONE)
    record = outcome.record
    assert (record.status, record.no_quote_reason) == ("no_quote", "no_valid_quote")
    assert [m["reason"] for m in bad.told("released")] == ["invalid"]
    (released,) = good.told("released")
    assert (released["reason"], released["quoteId"]) == ("not_selected", good.rfqs()[1]["quoteId"])
    assert rfq.inventory.committed(97, good.wallet.address, NGNS.address) == 0
    assert rfq.slots.count(rfq.caller.identity) == 0
    assert await rfq.funds.committed(97, record.taker, record.sell_token) == 0


async def test_no_bundle_when_the_makers_together_cannot_cover_the_size(
    rfq: RfqHarness,
) -> None:
    one = rfq.maker(1, depth=30 * ONE)
    rfq.maker(2, depth=30 * ONE)
    record = (await rfq.request(sell=100 * ONE)).record
    assert (record.status, record.no_quote_reason) == ("no_quote", "no_valid_quote")
    assert len(one.rfqs()) == 1  # only the full-size round: nothing to plan legs from
    assert record.available_sell == 60 * ONE + fee_on(60 * ONE, 5)
    assert record.available_buy == 2 * int(30 * ONE * RATE)


async def test_an_answer_after_the_reply_budget_is_not_used(rfq: RfqHarness) -> None:
    late = rfq.maker(1, rate=RATE * 2, delay_s=BUDGET_S + 0.2)
    on_time = rfq.maker(2)
    record = (await rfq.request()).record
    assert record.quote is not None
    assert [o.maker for o in record.quote.orders] == [on_time.wallet.address]
    await late.answered()
    # Nobody waited for the late quote any more (the auction had given up on it): the maker
    # stream answers it `released` (reason late, api/rfq/maker_stream.py), and no inventory
    # of that maker is held.
    assert late.deliveries == [(late.rfqs()[0]["quoteId"], False)]
    assert rfq.inventory.committed(97, late.wallet.address, NGNS.address) == 0
    assert late.told("released") == []  # not one of the auction's losers either


async def test_silent_makers_cost_the_reply_budget_and_no_more(rfq: RfqHarness) -> None:
    silent: list[FakeMaker] = [rfq.maker(i, mode="silent") for i in (1, 2)]
    started = rfq.clock.monotonic()
    record = (await rfq.request()).record
    took = rfq.clock.monotonic() - started
    assert (record.status, record.no_quote_reason) == ("no_quote", "no_valid_quote")
    assert BUDGET_S - 0.05 <= took < BUDGET_S + 1.0  # generous: the suite runs on busy cores
    for maker in silent:
        (ask,) = maker.rfqs()
        assert ask["replyByMs"] <= int(record.reply_by * 1000)
    assert rfq.slots.count(rfq.caller.identity) == 0


async def test_the_outcome_says_how_long_the_makers_were_waited_for(rfq: RfqHarness) -> None:
    # The Server-Timing `makers` figure (docs/decisions.md F23): from the first `rfq` sent to the
    # last answer read, inside the request's own time.
    slow = rfq.maker(1, delay_s=0.2)
    fast = rfq.maker(2)
    started = rfq.clock.monotonic()
    outcome = await rfq.request()
    took = rfq.clock.monotonic() - started
    assert outcome.record.status == "quoted"
    assert 0.2 <= outcome.maker_wait_s <= took
    # ... and each maker's part of it (Server-Timing `maker`): the slow one ended the wait.
    waits = outcome.maker_waits_s
    assert set(waits) == {slow.wallet.address, fast.wallet.address}
    assert waits[slow.wallet.address] == outcome.maker_wait_s
    assert waits[fast.wallet.address] < 0.2
    # A silent maker is waited for until the budget ends (less the answer margin).
    rfq.maker(3, mode="silent")
    started = rfq.clock.monotonic()
    outcome = await rfq.request()
    took = rfq.clock.monotonic() - started
    assert BUDGET_S - 0.05 <= outcome.maker_wait_s <= took
