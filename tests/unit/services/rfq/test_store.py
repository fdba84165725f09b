"""The RFQ store (services/rfq/store.py behind the RfqStore port): what it holds, and that it is
the only holder of RFQ record state: a service and a settlement built afresh on the same store
carry on exactly where the others left off."""

from __future__ import annotations

from simulator.services.rfq.model import RfqRecord
from simulator.services.rfq.ports import RfqStore
from simulator.services.rfq.store import InMemoryRfqStore
from simulator.services.shared.fills import Fill
from tests.unit.services.rfq.harness import ONE, TX, RfqHarness


def record(rfq_id: str) -> RfqRecord:
    return RfqRecord(
        rfq_id=rfq_id,
        chain_id=97,
        sell_token="0xS",
        buy_token="0xB",
        requested_sell=1,
        requested_buy=None,
        taker="0xT",
        owner="ip:127.0.0.1",
        partner_id=None,
        claim_hash=b"",
        created_at=0.0,
        reply_by=0.75,
        quote_ttl_ms=60_000,
    )


def fill(order_hash: bytes, log_index: int = 0) -> Fill:
    return Fill(97, TX, log_index, 1.0, order_hash, "0xM", "0xT", "0xB", 2, "0xS", 1, 0)


def test_records_are_kept_by_id_oldest_first_and_listed_as_a_copy() -> None:
    store: RfqStore = InMemoryRfqStore()
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
    store: RfqStore = InMemoryRfqStore()
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
    empty = InMemoryRfqStore()
    other = rfq.build(empty).settlement
    assert other.next_due() is None
    await other.on_fill(rfq.fill(first))
    assert empty.all() == []
    assert [e.type for e in rfq.events.events] == ["rfq.filled"]
