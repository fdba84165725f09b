"""Per-object time controls (docs/decisions.md TT1-TT3): one RFQ lapses now, one submitted RFQ's
settlement gives up now, one ended RFQ gives back its slot, each through the settlement's own
transition, with the service clock and every other RFQ left as they were."""

from __future__ import annotations

import math

import pytest

from simulator.errors import Conflict, NotFound, UpstreamError
from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.time_control import RfqTimeControl
from tests.unit.services.rfq.harness import NGNS, TAKER, TX, RfqHarness, status
from tests.unit.services.rfq.rfq_bodies import rfq_body


def control(rfq: RfqHarness) -> RfqTimeControl:
    return RfqTimeControl(rfq.clock, rfq.store, rfq.settlement, rfq.slots, rfq.funds)


async def two_quotes(rfq: RfqHarness) -> tuple[StoredRfq, StoredRfq]:
    """The RFQ a control acts on, and another live quote of the same caller."""
    return await rfq.quoted(), await rfq.quoted()


async def test_expire_lapses_one_quote_now_through_the_expiry_path(rfq: RfqHarness) -> None:
    maker = rfq.maker(1)
    target, other = await two_quotes(rfq)
    assert target.quote is not None
    assert other.quote is not None
    other_expires_at = other.quote.expires_at
    before = rfq.clock.time()
    record = await control(rfq).expire(target.rfq_id)
    assert record is target
    assert record.status == "expired"
    assert record.provisional_since is not None
    assert before <= record.provisional_since <= rfq.clock.time()
    # expiresAt is now, to the whole second (block times are whole seconds).
    assert target.quote.expires_at == math.floor(record.provisional_since)
    assert rfq.event_types() == [("rfq.expired", target.rfq_id)]
    assert rfq_body(rfq)["failReason"] is None
    told = [m["rfqId"] for m in maker.told("expired")]
    assert told == [target.rfq_id]
    # The maker's hold for this quote went; the other quote keeps its own.
    (other_order,) = other.quote.orders
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == (
        other_order.maker_gives
    )
    # Nothing else moved: the clock, the other quote, the slots (they run to the deadline).
    assert rfq.clock.offset_seconds == 0
    assert (status(other), other.quote.expires_at) == ("quoted", other_expires_at)
    assert rfq.slots.count(rfq.caller.identity) == 2
    # A sweep finds nothing more to do for it; submit now answers as for any lapsed quote.
    await rfq.settlement.sweep()
    assert rfq.event_types() == [("rfq.expired", target.rfq_id)]
    with pytest.raises(Conflict) as refused:
        rfq.service.submit(target, TX)
    assert refused.value.details == {"reason": "not_submittable", "status": "expired"}


async def test_an_expired_quote_filled_on_chain_is_the_late_fill(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    await control(rfq).expire(record.rfq_id)
    await rfq.fill_all(record)  # the taker's swap, mined before the order's deadline
    assert (record.status, record.late, record.superseded) == ("filled", True, "expired")
    assert rfq.event_types() == [("rfq.expired", record.rfq_id), ("rfq.filled", record.rfq_id)]
    assert (rfq_body(rfq)["late"], rfq_body(rfq)["supersedes"]) == (True, "rfq.expired")


async def test_a_cancelled_quote_lapses_without_telling_the_makers_again(
    rfq: RfqHarness,
) -> None:
    maker = rfq.maker(1)
    record = await rfq.quoted()
    await rfq.service.cancel(record)
    await control(rfq).expire(record.rfq_id)
    assert record.status == "expired"
    assert maker.told("expired") == []


async def test_give_up_fails_a_transaction_that_never_landed(rfq: RfqHarness) -> None:
    rfq.maker(1)
    target, other = await two_quotes(rfq)
    rfq.service.submit(target, TX)
    record = await control(rfq).give_up(target.rfq_id)
    assert (record.status, record.fail_reason) == ("failed", "not_landed")
    assert rfq.chain.receipt_reads == [TX]
    assert rfq.event_types() == [("rfq.failed", target.rfq_id)]
    assert (rfq_body(rfq)["failReason"], rfq_body(rfq)["txHash"]) == ("not_landed", TX)
    assert (status(other), rfq.clock.offset_seconds) == ("quoted", 0)
    # The orders stay executable until their deadline: a fill corrects the failure.
    await rfq.fill_all(target, tx_hash="0x" + "cd" * 32)
    assert (target.status, target.late, target.superseded) == ("filled", True, "failed")
    assert rfq_body(rfq)["supersedes"] == "rfq.failed"
    assert rfq_body(rfq)["previousFailReason"] == "not_landed"


async def test_give_up_fails_a_reverted_transaction_reverted(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    rfq.service.submit(record, TX)
    rfq.chain.receipts[TX] = False
    await control(rfq).give_up(record.rfq_id)
    assert (record.status, record.fail_reason) == ("failed", "reverted")


async def test_give_up_refuses_a_transaction_that_landed(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    rfq.service.submit(record, TX)
    rfq.chain.receipts[TX] = True  # mined and successful; its Fill logs are not indexed yet
    with pytest.raises(Conflict) as refused:
        await control(rfq).give_up(record.rfq_id)
    assert refused.value.details == {"reason": "transaction_landed", "status": "submitted"}
    assert (status(record), rfq.event_types()) == ("submitted", [])


async def test_give_up_with_the_chain_unreadable_is_502_and_changes_nothing(
    rfq: RfqHarness,
) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    rfq.service.submit(record, TX)
    rfq.chain.unreadable = True
    with pytest.raises(UpstreamError) as refused:
        await control(rfq).give_up(record.rfq_id)
    assert refused.value.details == {"reason": "chain_unreachable", "chainIds": [97]}
    assert (status(record), rfq.event_types()) == ("submitted", [])
    rfq.chain.unreadable = False
    await control(rfq).give_up(record.rfq_id)
    assert record.status == "failed"


async def test_give_up_when_a_fill_arrives_during_the_receipt_read(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    rfq.service.submit(record, TX)

    async def fill_meanwhile() -> None:
        await rfq.fill_all(record)

    rfq.chain.on_receipt_read = fill_meanwhile
    with pytest.raises(Conflict) as refused:
        await control(rfq).give_up(record.rfq_id)
    assert refused.value.details == {"reason": "not_submitted", "status": "filled"}
    assert rfq.event_types() == [("rfq.filled", record.rfq_id)]


async def test_release_gives_back_an_ended_rfqs_slot_and_reservation(rfq: RfqHarness) -> None:
    rfq.maker(1)
    target, other = await two_quotes(rfq)
    assert other.quote is not None
    await control(rfq).expire(target.rfq_id)
    assert rfq.slots.count(rfq.caller.identity) == 2
    control(rfq).release(target.rfq_id)
    assert rfq.slots.count(rfq.caller.identity) == 1
    assert await rfq.funds.committed(97, TAKER.address, target.sell_token) == other.quote.taker_pays
    control(rfq).release(target.rfq_id)  # nothing left to give back: the same answer
    assert rfq.slots.count(rfq.caller.identity) == 1


@pytest.mark.parametrize(
    ("act", "reason"),
    [("expire", "not_quoted"), ("give_up", "not_submitted"), ("release", "still_live")],
)
async def test_wrong_state_is_409_and_unknown_is_404(
    rfq: RfqHarness, act: str, reason: str
) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    if act == "expire":
        rfq.service.submit(record, TX)  # submitted: no longer a quote that can lapse
    live = status(record)

    async def call(rfq_id: str) -> object:
        found = getattr(control(rfq), act)(rfq_id)
        return await found if act != "release" else found

    with pytest.raises(Conflict) as refused:
        await call(record.rfq_id)
    assert refused.value.details == {"reason": reason, "status": live}
    assert status(record) == live
    with pytest.raises(NotFound):
        await call("rfq_unknown")
