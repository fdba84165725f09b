"""The RFQ store (services/rfq/store.py behind the RfqStore port): what it holds, and that it is
the only holder of RFQ record state: a service and a settlement built afresh on the same store
carry on exactly where the others left off."""

from __future__ import annotations

from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.ports import RfqStore
from simulator.services.rfq.store import TieredRfqStore
from simulator.services.shared.fills import Fill
from tests.unit.services.rfq.fake_archive import MemoryRfqArchive
from tests.unit.services.rfq.harness import ONE, TX, RfqHarness
from tests.unit.services.rfq.stored_records import record


def fill(order_hash: bytes, log_index: int = 0) -> Fill:
    return Fill(97, TX, log_index, 1.0, order_hash, "0xM", "0xT", "0xB", 2, "0xS", 1, 0)


def test_records_are_kept_by_id_oldest_first_and_listed_as_a_copy() -> None:
    store: RfqStore = TieredRfqStore(archive=MemoryRfqArchive())
    first, second = record("rfq_1"), record("rfq_2")
    store.add(first)
    store.add(second)
    assert store.get("rfq_1") is first
    assert store.get("rfq_3") is None
    listed = store.all()
    store.discard("rfq_1")
    store.discard("rfq_unknown")
    assert listed == [first, second]  # the copy did not change under the caller
    assert store.all() == [second]


def test_fills_are_kept_per_rfq_once_per_order() -> None:
    store: RfqStore = TieredRfqStore(archive=MemoryRfqArchive())
    assert store.by_order_hash(b"\x01" * 32) is None
    a, b = fill(b"\x01" * 32), fill(b"\x02" * 32, 1)
    assert store.add_fill("rfq_1", a) == [a]
    assert store.add_fill("rfq_1", a) == [a]  # the same log indexed twice counts once
    assert store.add_fill("rfq_1", b) == [a, b]
    assert store.add_fill("rfq_2", b) == [b]


async def test_quoted_orders_lead_fills_to_their_rfq(rfq: RfqHarness) -> None:
    rfq.maker(1, depth=60 * ONE)
    rfq.maker(2, depth=60 * ONE)
    quoted = await rfq.quoted()
    assert quoted.quote is not None
    for order in quoted.quote.orders:
        assert rfq.store.by_order_hash(order.order_hash) is quoted
    no_quote = (await rfq.request(restricted=["0x" + "99" * 20])).record
    assert [r.rfq_id for r in rfq.store.all()] == [quoted.rfq_id, no_quote.rfq_id]


async def test_service_and_settlement_keep_no_record_state_of_their_own(rfq: RfqHarness) -> None:
    rfq.maker(1, depth=60 * ONE)
    rfq.maker(2, depth=60 * ONE)
    outcome = await rfq.request()
    bundle = outcome.record
    assert bundle.quote is not None
    first, second = bundle.quote.orders
    await rfq.settlement.on_fill(rfq.fill(first, log_index=0))
    # A new service and a new settlement on the same store: everything is still there.
    again = rfq.build(rfq.store)
    service, settlement = again.service, again.settlement
    assert service.owned(bundle.rfq_id, rfq.caller, outcome.claim_token) is bundle
    await settlement.on_fill(rfq.fill(second, log_index=1))  # the first Fill was remembered
    assert bundle.status == "filled"
    # ... and a store of their own knows nothing about it.
    empty = TieredRfqStore(archive=MemoryRfqArchive())
    other = rfq.build(empty).settlement
    assert other.next_due() is None
    await other.on_fill(rfq.fill(first))
    assert empty.all() == []
    assert [e.type for e in rfq.events.events] == ["rfq.filled"]


async def test_the_sweep_index_holds_quoted_rfqs_by_expiry_and_submitted_by_deadline(
    rfq: RfqHarness,
) -> None:
    """What settlement's sweep reads: quoted RFQs by expiresAt, submitted ones by order
    deadline; a record without a quote never enters, a settled or forgotten one leaves."""
    rfq.maker(1, depth=60 * ONE)
    rfq.maker(2, depth=60 * ONE)
    first, second, third = [await rfq.quoted() for _ in range(3)]
    no_quote = (await rfq.request(restricted=["0x" + "99" * 20])).record
    assert no_quote.quote is None
    assert first.quote is not None
    assert second.quote is not None
    assert third.quote is not None
    assert rfq.store.next_expiry() == first.quote.expires_at
    assert rfq.store.next_deadline() is None
    assert rfq.store.expiring(first.quote.expires_at - 0.001) == []
    rfq.service.submit(first, TX)
    assert rfq.store.next_expiry() == second.quote.expires_at  # submitted: no longer expiring
    assert rfq.store.next_deadline() == first.quote.order_deadline
    for index, order in enumerate(second.quote.orders):
        await rfq.settlement.on_fill(rfq.fill(order, log_index=index))
    assert second.status == "filled"
    assert rfq.store.expiring(third.quote.expires_at) == [third]
    assert rfq.store.expiring(third.quote.expires_at) == []  # returned once
    assert rfq.store.next_expiry() is None
    assert rfq.store.overdue(first.quote.order_deadline) == []  # not before the deadline
    late = first.quote.order_deadline + 1
    assert rfq.store.overdue(late) == [first]
    assert rfq.store.overdue(late) == [first]  # until it leaves submitted
    assert rfq.store.next_deadline() is None
    rfq.store.discard(first.rfq_id)
    assert rfq.store.overdue(late) == []


async def test_the_sweep_index_is_rebuilt_from_records_put_back_whole(rfq: RfqHarness) -> None:
    rfq.maker(1, depth=60 * ONE)
    rfq.maker(2, depth=60 * ONE)
    quoted, submitted = await rfq.quoted(), await rfq.quoted()
    rfq.service.submit(submitted, TX)
    assert quoted.quote is not None
    assert submitted.quote is not None
    store = TieredRfqStore(archive=MemoryRfqArchive())
    store.records = dict(rfq.store.records)  # as a restore sets the attribute
    assert (store.next_expiry(), store.next_deadline()) == (None, None)
    store.reindex_open()
    assert store.next_expiry() == quoted.quote.expires_at
    assert store.next_deadline() == submitted.quote.order_deadline


async def test_records_at_rest_leave_memory_and_stay_readable(rfq: RfqHarness) -> None:
    """Two tiers: a record at rest for longer than the spill's horizon goes to the archive with
    its fills and order hashes; a live one never does. Read back, it is the same record."""
    rfq.maker(1)
    filled = await rfq.quoted()
    await rfq.fill_all(filled)
    live = await rfq.quoted()
    assert filled.quote is not None
    assert filled.filled_at is not None
    fills = dict(rfq.store.fills[filled.rfq_id])
    assert rfq.store.spill(filled.filled_at) == 0  # at rest since then: not before it
    assert rfq.store.spill(filled.filled_at + 0.001) == 1
    assert rfq.store.in_memory() == 1
    assert filled.rfq_id not in rfq.store.records
    assert filled.rfq_id not in rfq.store.fills
    back = rfq.store.by_order_hash(filled.quote.orders[0].order_hash)
    assert back == filled
    assert back is not filled  # a copy read back from the archive ...
    assert rfq.store.get(filled.rfq_id) is back  # ... which is now the one in memory
    assert rfq.store.fills[filled.rfq_id] == fills
    assert rfq.store.get(live.rfq_id) is live
    assert [r.rfq_id for r in rfq.store.all()] == [filled.rfq_id, live.rfq_id]


async def expired_quote(rfq: RfqHarness) -> StoredRfq:
    """A quote of one maker that has lapsed and been swept: at rest from its expiry."""
    rfq.maker(1)
    return await rfq.expired()


async def test_a_record_read_back_waits_a_spill_then_goes_back_with_its_changes(
    rfq: RfqHarness,
) -> None:
    expired = await expired_quote(rfq)
    later = rfq.clock.time() + 3600
    assert rfq.store.spill(later) == 1
    recalled = rfq.store.get(expired.rfq_id)
    assert recalled is not None
    assert rfq.store.spill(later) == 0  # a caller may still hold it across an await
    recalled.cancelled = True  # a change made while it is in memory
    assert rfq.store.spill(later) == 1  # the next spill takes it, changes included
    again = rfq.store.get(expired.rfq_id)
    assert again is not None
    assert again.cancelled


async def test_a_record_live_at_a_spill_leaves_at_the_first_one_after_its_rest(
    rfq: RfqHarness,
) -> None:
    """A sweep looks at the records due, not at every record in memory: one still live when a
    spill looks at it, and one whose rest began after that spill's horizon, are looked at
    again by later spills and leave at the first whose horizon is past their rest."""
    rfq.maker(1)
    live = await rfq.quoted()
    assert live.quote is not None
    assert rfq.store.spill(rfq.clock.time()) == 0  # live: no horizon up to now takes it
    await rfq.advance_to(live.quote.expires_at)
    await rfq.settlement.sweep()
    since = live.at_rest_since()
    assert since is not None
    assert rfq.store.spill(since) == 0  # at rest since then: not before it
    assert rfq.store.evict_at_rest(since) == 0
    assert rfq.store.spill(since + 0.001) == 1
    assert rfq.store.in_memory() == 0


async def test_eviction_forgets_records_at_rest_in_memory_and_keeps_the_live(
    rfq: RfqHarness,
) -> None:
    rfq.maker(1)
    expired = await rfq.expired()
    live = await rfq.quoted()
    since = expired.at_rest_since()
    assert since is not None
    assert rfq.store.evict_at_rest(since + 0.001) == 1
    assert rfq.store.get(expired.rfq_id) is None
    assert rfq.store.evict_at_rest(rfq.clock.time()) == 0
    assert rfq.store.get(live.rfq_id) is live


async def test_a_late_fill_corrects_a_record_that_left_memory(rfq: RfqHarness) -> None:
    """The 24 h correction reaches the archive: the fill finds the record by its order hash,
    the record comes back, is corrected to filled and announced as such."""
    record = await expired_quote(rfq)
    assert record.quote is not None
    await rfq.advance_to(rfq.clock.time() + 3600)
    assert rfq.store.spill(rfq.clock.time()) == 1
    for index, order in enumerate(record.quote.orders):
        await rfq.settlement.on_fill(rfq.fill(order, log_index=index))
    corrected = rfq.store.get(record.rfq_id)
    assert corrected is not None
    assert (corrected.status, corrected.late, corrected.superseded) == ("filled", True, "expired")
    assert [e.type for e in rfq.events.events][-1] == "rfq.filled"


def test_a_record_with_two_rest_entries_leaves_once() -> None:
    """An id can sit in the rest index twice (an old entry and a recall's): one pass takes the
    record once."""
    store = TieredRfqStore(archive=MemoryRfqArchive())
    kept = record("rfq_1")
    kept.status = "no_quote"  # at rest from its creation
    store.add(kept)
    store.add(kept)  # a second entry for the same id
    since = kept.at_rest_since()
    assert since is not None
    assert store.spill(since + 1) == 1
    assert store.in_memory() == 0
