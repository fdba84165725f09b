"""Who the auction asks, when, and which quote wins: the preferred makers' head start and the
fallback to the rest after it, silent and declining preferred makers, restricted steering (no
fallback), the best single quote and the losers' release (spec 1-rfq-v2 "Request body",
docs/decisions.md R12)."""

from __future__ import annotations

from simulator.services.rfq.model import RoutingState, StoredRfq
from tests.unit.services.rfq.harness import HEAD_START_S, RATE, TIMING, RfqHarness


def received(record: StoredRfq) -> tuple[int, int]:
    """(preferredQuotesReceived, openMarketQuotesReceived)"""
    return record.routing.preferred_quotes_received, record.routing.open_market_quotes_received


async def test_a_preferred_quote_within_the_head_start_means_the_rest_are_never_asked() -> None:
    # A long head start (the preferred quote ends it at once, so the test does not wait it out):
    # with the harness's 100 ms a loaded CI machine could let it lapse before the preferred
    # maker's signed reply arrived, and then the better maker is asked and wins.
    rfq = RfqHarness(
        timing=TIMING.model_copy(update={"reply_budget_ms": 5000, "preferred_wait_ms": 4000})
    )
    preferred = rfq.maker(1)
    better = rfq.maker(2, rate=RATE * 2)  # a better price that nobody asks for
    outcome = await rfq.request(preferred=[preferred.wallet.address])
    record = outcome.record
    assert record.status == "quoted"
    assert record.quote is not None
    assert [o.maker for o in record.quote.orders] == [preferred.wallet.address]
    assert better.received == []  # the auction is over: nothing can be sent to it any more
    assert record.routing == RoutingState(
        preference_applied=True,
        restriction_applied=False,
        fallback_used=False,
        target_maker_wallets=[preferred.wallet.address],
        preferred_quotes_received=1,
        open_market_quotes_received=0,
    )
    await rfq.settled_makers()


async def test_a_silent_preferred_maker_holds_the_rest_back_for_the_head_start(
    rfq: RfqHarness,
) -> None:
    preferred = rfq.maker(1, mode="silent")
    other = rfq.maker(2)
    started = rfq.clock.monotonic()
    record = (await rfq.request(preferred=[preferred.wallet.address])).record
    assert record.status == "quoted"
    assert record.quote is not None
    assert [o.maker for o in record.quote.orders] == [other.wallet.address]
    (asked_preferred,) = preferred.asked_at()
    (asked_other,) = other.asked_at()
    assert asked_preferred < asked_other
    assert asked_other - started >= HEAD_START_S
    assert record.routing.fallback_used is True
    assert record.routing.preferred_quotes_received == 0
    assert record.routing.open_market_quotes_received == 1


async def test_a_declining_preferred_maker_does_not_end_the_head_start_early(
    rfq: RfqHarness,
) -> None:
    preferred = rfq.maker(1, mode="decline")
    other = rfq.maker(2)
    started = rfq.clock.monotonic()
    record = (await rfq.request(preferred=[preferred.wallet.address])).record
    assert record.status == "quoted"
    assert record.quote is not None
    assert [o.maker for o in record.quote.orders] == [other.wallet.address]
    # The decline was taken (at once), and still the rest waited out the head start.
    assert [taken for _, taken in preferred.deliveries] == [True]
    (asked_other,) = other.asked_at()
    assert asked_other - started >= HEAD_START_S
    assert record.routing.fallback_used is True
    assert received(record) == (0, 1)


async def test_a_preferred_quote_after_the_head_start_still_competes() -> None:
    # A longer reply budget: the late preferred answer must still land well inside it.
    rfq = RfqHarness(timing=TIMING.model_copy(update={"reply_budget_ms": 1500}))
    preferred = rfq.maker(1, rate=RATE * 2, delay_s=HEAD_START_S + 0.05)
    other = rfq.maker(2)
    record = (await rfq.request(preferred=[preferred.wallet.address])).record
    assert record.quote is not None
    assert [o.maker for o in record.quote.orders] == [preferred.wallet.address]
    assert record.routing.fallback_used is True
    assert received(record) == (1, 1)
    (released,) = other.told("released")
    assert released["reason"] == "not_selected"
    assert released["rfqId"] == record.rfq_id
    assert rfq.inventory.committed(97, other.wallet.address, record.buy_token) == 0


async def test_restricted_makers_are_the_only_ones_asked(rfq: RfqHarness) -> None:
    chosen = rfq.maker(1)
    better = rfq.maker(2, rate=RATE * 2)
    record = (await rfq.request(restricted=[chosen.wallet.address.lower()])).record
    assert record.quote is not None
    assert [o.maker for o in record.quote.orders] == [chosen.wallet.address]
    assert better.received == []
    assert record.routing == RoutingState(
        preference_applied=False,
        restriction_applied=True,
        fallback_used=False,
        target_maker_wallets=[chosen.wallet.address.lower()],
        preferred_quotes_received=1,
        open_market_quotes_received=0,
    )


async def test_restricted_makers_that_decline_leave_no_quote_and_no_fallback(
    rfq: RfqHarness,
) -> None:
    chosen = rfq.maker(1, mode="decline")
    other = rfq.maker(2)
    outcome = await rfq.request(restricted=[chosen.wallet.address])
    record = outcome.record
    assert (record.status, record.no_quote_reason) == ("no_quote", "no_restricted_liquidity")
    assert len(chosen.rfqs()) == 1
    assert other.received == []
    assert record.routing.fallback_used is False
    assert rfq.slots.count(rfq.caller.identity) == 0  # a no-quote frees its slot at once
    assert await rfq.funds.committed(97, record.taker, record.sell_token) == 0
    assert rfq.store.get(record.rfq_id) is record


async def test_a_restricted_wallet_that_is_not_online_matches_nothing(rfq: RfqHarness) -> None:
    other = rfq.maker(2)
    record = (await rfq.request(restricted=["0x" + "99" * 20])).record
    assert (record.status, record.no_quote_reason) == ("no_quote", "no_restricted_liquidity")
    assert other.received == []


async def test_nobody_online_is_no_makers_online(rfq: RfqHarness) -> None:
    record = (await rfq.request()).record
    assert (record.status, record.no_quote_reason) == ("no_quote", "no_makers_online")
    assert record.available_sell is None
    assert record.available_buy is None


async def test_exact_input_takes_the_most_output_and_releases_the_losers(
    rfq: RfqHarness,
) -> None:
    worse = rfq.maker(1, rate=RATE)
    best = rfq.maker(2, rate=RATE * 3 / 2)
    worst = rfq.maker(3, rate=RATE / 2)
    record = (await rfq.request(sell=100 * 10**18)).record
    assert record.quote is not None
    (order,) = record.quote.orders
    assert order.maker == best.wallet.address
    assert order.maker_gives == int(order.maker_receives * RATE * 3 / 2)
    assert record.routing.open_market_quotes_received == 3
    for loser in (worse, worst):
        (released,) = loser.told("released")
        assert (released["reason"], released["rfqId"]) == ("not_selected", record.rfq_id)
        assert released["quoteId"] == loser.rfqs()[0]["quoteId"]
        assert rfq.inventory.committed(97, loser.wallet.address, record.buy_token) == 0
    assert best.told("released") == []
    assert rfq.inventory.committed(97, best.wallet.address, record.buy_token) == order.maker_gives


async def test_exact_output_takes_the_least_input(rfq: RfqHarness) -> None:
    rfq.maker(1, rate=RATE)
    best = rfq.maker(2, rate=RATE * 2)
    record = (await rfq.request(sell=None, buy=150_000 * 10**6)).record
    assert record.quote is not None
    (order,) = record.quote.orders
    assert order.maker == best.wallet.address
    assert order.maker_gives == 150_000 * 10**6
    assert record.quote.taker_pays == order.maker_receives + order.fee_amount
