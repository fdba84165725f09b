"""Bounded memory (docs/decisions.md R20): an RFQ record at rest is forgotten once the 24 h
correction window and the retention have passed, with its order index and fills; a live one,
or one a late fill could still correct, is kept. Lapsed slots and taker reservations of callers
that never come back are dropped too."""

from __future__ import annotations

from simulator.clock import Clock
from simulator.services.rfq.funds import MemoryReservations
from simulator.services.rfq.slots import OutstandingSlots
from tests.unit.services.rfq.harness import ONE, TX, USDT, RfqHarness, status

DAY_S = 24 * 3600.0
RETENTION_S = 3600.0


async def test_records_at_rest_go_after_the_window_and_the_retention(rfq: RfqHarness) -> None:
    rfq.maker(1)
    filled = await rfq.quoted()
    await rfq.fill_all(filled)
    assert filled.status == "filled"
    no_quote = (await rfq.request(sell=500_000 * ONE)).record  # more than the maker's depth
    assert no_quote.status == "no_quote"
    expired = await rfq.quoted()
    live = await rfq.quoted()
    rfq.service.submit(live, TX)
    assert expired.quote is not None
    await rfq.advance_to(expired.quote.expires_at)
    await rfq.settlement.sweep()
    assert expired.status == "expired"
    assert live.status == "submitted"
    assert filled.quote is not None
    order_hash = filled.quote.orders[0].order_hash

    assert rfq.settlement.evict() == 0
    # Just inside correction window + retention of the expired one: all kept.
    assert expired.provisional_since is not None
    await rfq.advance_to(expired.provisional_since + DAY_S + RETENTION_S - 1)
    await rfq.settlement.sweep()
    assert status(live) == "failed"  # at rest only from now: kept a day and an hour more
    assert rfq.settlement.evict() == 2  # the filled one and the no_quote (created earlier)
    assert rfq.store.get(filled.rfq_id) is None
    assert rfq.store.get(no_quote.rfq_id) is None
    assert rfq.store.by_order_hash(order_hash) is None
    assert filled.rfq_id not in rfq.store.fills
    assert rfq.store.get(expired.rfq_id) == expired  # a late fill could still correct it
    await rfq.advance_to(expired.provisional_since + DAY_S + RETENTION_S + 1)
    assert rfq.settlement.evict() == 1
    assert rfq.store.get(expired.rfq_id) is None
    assert rfq.store.get(live.rfq_id) is live
    assert [r.rfq_id for r in rfq.store.all()] == [live.rfq_id]


async def test_a_fill_of_a_forgotten_rfq_is_ignored(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    await rfq.advance_to(record.quote.expires_at)
    await rfq.settlement.sweep()
    await rfq.advance_to(rfq.clock.time() + DAY_S + RETENTION_S + 1)
    assert rfq.settlement.evict() == 1
    before = list(rfq.events.events)
    await rfq.settlement.on_fill(rfq.fill(record.quote.orders[0]))  # nothing to correct
    assert rfq.events.events == before


async def test_lapsed_slots_of_an_owner_who_never_returns_are_released() -> None:
    clock = Clock()
    slots = OutstandingSlots(clock)
    for i in range(3):
        slots.take(f"ip:10.0.0.{i}", f"r{i}", 4, clock.time() + 60)
    await clock.advance(61)
    slots.evict_lapsed()
    assert slots._slots == {}
    assert slots._by_owner == {}
    assert slots._ends == {}


async def test_lapsed_reservations_and_their_heaps_are_dropped(rfq: RfqHarness) -> None:
    for i in range(3):
        taker = f"0x{i:040x}"
        rfq.chain.fund_taker(10, USDT, taker)
        await rfq.funds.reserve_checked(f"r{i}", 97, taker, USDT.address, 1, rfq.clock.time() + 5)
    await rfq.clock.advance(6)
    rfq.funds.evict_lapsed()
    ledger = rfq.funds.ledger
    assert isinstance(ledger, MemoryReservations)
    assert ledger._reservations == {}
    assert ledger._ends == {}
