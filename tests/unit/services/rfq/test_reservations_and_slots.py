"""What a firm quote holds, and until when (spec 1-rfq-v2 "Limits" and request behaviour 2):
the makers' inventory to expiresAt (dropped on cancel, lapse or fill), the taker's funds to
latestOrderDeadline plus the skew (kept on cancel and lapse, dropped on fill), and the
caller's outstanding slot (cap, 429 with nextSlotFreeAt, kept on cancel, freed by a fill or
at latestOrderDeadline, at once on no_quote or error)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from rfqkit.timestamps import from_unix, isoformat
from simulator.errors import InvalidRequest, RateLimited
from simulator.services.rfq.funds import RESERVATION_SKEW_S
from simulator.services.rfq.model import StoredRfq
from simulator.settings import LimitSettings
from tests.unit.services.rfq.harness import NGNS, ONE, TAKER, USDT, RfqHarness, status


async def held(rfq: RfqHarness) -> int:
    """The taker's USDT reserved by live quotes."""
    return await rfq.funds.committed(97, TAKER.address, USDT.address)


def slots(rfq: RfqHarness) -> int:
    return rfq.slots.count(rfq.caller.identity)


def pays(record: StoredRfq) -> int:
    assert record.quote is not None
    return record.quote.taker_pays


async def test_maker_holds_run_to_expires_at_and_cancel_drops_them(rfq: RfqHarness) -> None:
    maker = rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    (order,) = record.quote.orders
    (hold,) = rfq.inventory.holds_for(97, USDT.address, NGNS.address)
    assert (hold.rfq_id, hold.quote_id, hold.maker, hold.amount, hold.until) == (
        record.rfq_id,
        order.quote_id,
        maker.wallet.address.lower(),
        order.maker_gives,
        record.quote.expires_at,
    )
    await rfq.service.cancel(record)
    assert status(record) == "quoted"  # the signed order is not revoked
    assert record.cancelled is True
    (released,) = maker.told("released")
    assert (released["reason"], released["quoteId"]) == ("cancelled", order.quote_id)
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == 0
    # Cancel keeps the slot and the taker's reservation to the deadline.
    assert slots(rfq) == 1
    assert (await held(rfq)) == pays(record)
    # Lapsing later tells the makers nothing more: they were released already.
    await rfq.advance_to(record.quote.expires_at)
    await rfq.settlement.sweep()
    assert record.status == "expired"
    assert maker.told("expired") == []
    assert rfq.event_types() == [("rfq.expired", record.rfq_id)]


async def test_maker_holds_lapse_at_expires_at_without_a_sweep(rfq: RfqHarness) -> None:
    maker = rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    await rfq.advance_to(record.quote.expires_at - 1)
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) > 0
    await rfq.clock.advance(1)
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == 0
    assert rfq.inventory.holds_for(97, USDT.address, NGNS.address) == []


async def test_exact_input_reserves_the_cap_before_any_maker_is_asked(rfq: RfqHarness) -> None:
    rfq.chain.fund_taker(150 * ONE)
    maker = rfq.maker(1)
    first = await rfq.quoted(sell=100 * ONE)
    assert (await held(rfq)) == pays(first)
    with pytest.raises(InvalidRequest) as refused:
        await rfq.request(sell=100 * ONE)
    assert refused.value.details == {
        "reason": "insufficient_funds",
        "required": str(100 * ONE),
        "available": str(150 * ONE),
        "committed": str(pays(first)),
    }
    assert len(maker.rfqs()) == 1  # the refused request woke no maker
    assert slots(rfq) == 1  # its slot was given back at once
    assert [r.rfq_id for r in rfq.store.all()] == [first.rfq_id]  # and it left no record


async def until(condition: Callable[[], bool]) -> None:
    """Let the event loop run until `condition` holds (bounded)."""
    for _ in range(1_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


async def test_a_balance_read_ahead_of_a_slot_it_waited_for_is_read_again(
    rfq: RfqHarness,
) -> None:
    rfq.limits = LimitSettings(outstanding_default=1)
    rfq.maker(1, mode="decline", delay_s=0.2)
    rfq.chain.fund_taker(150 * ONE)
    first = asyncio.create_task(rfq.request(sell=100 * ONE))
    # The only slot, held while its makers answer, and the first's balance read:
    await until(lambda: slots(rfq) == 1 and len(rfq.chain.balance_reads) == 1)
    second = asyncio.create_task(rfq.request(sell=100 * ONE))
    await until(lambda: len(rfq.chain.balance_reads) == 2)  # read while waiting for a slot
    rfq.chain.fund_taker(50 * ONE)  # spent meanwhile
    assert (await first).record.status == "no_quote"
    with pytest.raises(InvalidRequest) as refused:
        await second
    assert refused.value.details == {
        "reason": "insufficient_funds",
        "required": str(100 * ONE),
        "available": str(50 * ONE),  # read again once the slot was free
    }


async def test_exact_output_is_checked_after_pricing_and_releases_the_makers(
    rfq: RfqHarness,
) -> None:
    rfq.chain.fund_taker(10 * ONE)
    maker = rfq.maker(1)
    with pytest.raises(InvalidRequest) as refused:
        await rfq.request(sell=None, buy=150_000 * 10**6)
    details = refused.value.details
    assert details is not None
    assert (details["reason"], details["available"]) == ("insufficient_funds", str(10 * ONE))
    assert int(details["required"]) > 10 * ONE  # takerPays of the priced quote
    (released,) = maker.told("released")
    assert (released["reason"], released["quoteId"]) == ("not_selected", maker.rfqs()[0]["quoteId"])
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == 0
    assert (slots(rfq), (await held(rfq)), rfq.store.all()) == (0, 0, [])


async def test_the_reservation_lasts_to_the_last_deadline_plus_skew_unless_filled(
    rfq: RfqHarness,
) -> None:
    rfq.maker(1)
    lapsing = await rfq.quoted()
    filled = await rfq.quoted()
    assert lapsing.quote is not None
    assert (await held(rfq)) == pays(lapsing) + pays(filled)
    await rfq.fill_all(filled)
    assert (await held(rfq)) == pays(lapsing)  # a fill frees its reservation at once
    await rfq.advance_to(lapsing.quote.expires_at)
    await rfq.settlement.sweep()
    assert lapsing.status == "expired"
    assert (await held(rfq)) == pays(lapsing)  # a lapse does not
    await rfq.advance_to(lapsing.quote.latest_order_deadline + RESERVATION_SKEW_S - 0.5)
    assert (await held(rfq)) == pays(lapsing)
    await rfq.clock.advance(1)
    assert (await held(rfq)) == 0


async def test_an_aggregator_key_skips_proof_of_funds_and_has_its_own_cap(
    rfq: RfqHarness,
) -> None:
    rfq.chain.fund_taker(0)
    rfq.limits = LimitSettings(outstanding_default=1, outstanding_aggregator=2)
    rfq.maker(1)
    router = rfq.key_caller(frozenset({"trades:write", "rfq:aggregator"}))
    await rfq.quoted(caller=router)
    await rfq.quoted(caller=router)
    assert (await held(rfq)) == 0
    with pytest.raises(RateLimited) as over:
        await rfq.request(caller=router)
    assert over.value.details is not None
    assert over.value.details["cap"] == 2


async def test_the_outstanding_cap_and_when_the_next_slot_frees(rfq: RfqHarness) -> None:
    rfq.maker(1, life_ms=10_000)
    quotes = []
    for _ in range(4):
        quotes.append(await rfq.quoted())
        await rfq.clock.advance(2)  # each quote's deadline two seconds after the previous one
    deadlines = [q.quote.latest_order_deadline for q in quotes if q.quote is not None]
    assert deadlines == sorted(set(deadlines))
    with pytest.raises(RateLimited) as over:
        await rfq.request()
    assert over.value.details == {
        "reason": "outstanding_rfq_cap",
        "cap": 4,
        "nextSlotFreeAt": isoformat(from_unix(min(deadlines))),
    }
    assert "Retry-After" not in over.value.headers
    assert len(rfq.store.all()) == 4  # the refused request left no record
    await rfq.service.cancel(quotes[0])
    with pytest.raises(RateLimited):
        await rfq.request()  # cancel does not give the slot back
    await rfq.fill_all(quotes[1])
    fifth = await rfq.quoted()  # a fill does
    assert slots(rfq) == 4
    assert fifth.quote is not None
    # Lapsing at expiresAt keeps the slot; passing latestOrderDeadline frees it.
    await rfq.advance_to(quotes[0].quote.expires_at if quotes[0].quote else 0)
    await rfq.settlement.sweep()
    assert quotes[0].status == "expired"
    assert slots(rfq) == 4
    await rfq.advance_to(min(deadlines) + 0.5)
    assert slots(rfq) == 3


async def test_a_no_quote_frees_its_slot_at_once(rfq: RfqHarness) -> None:
    rfq.limits = LimitSettings(outstanding_default=1)
    rfq.maker(1, mode="decline")
    for _ in range(3):
        record = (await rfq.request()).record
        assert record.status == "no_quote"
        assert slots(rfq) == 0
        assert (await held(rfq)) == 0
