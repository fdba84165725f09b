"""Settlement steps that await (a receipt read, a maker notification, the sweeper's sleep) while
the indexer may reconcile a fill: what the sweep decided before the await must not overwrite
or reorder what happened during it."""

from __future__ import annotations

from typing import Any

from simulator.services.rfq.model import StoredRfq
from tests.unit.services.rfq.harness import TX, RfqHarness, status

# The same swap re-broadcast with more gas under another hash: the reported one never lands.
SPED_UP_TX = "0x" + "ef" * 32


async def submitted_past_deadline(rfq: RfqHarness) -> StoredRfq:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    rfq.service.submit(record, TX)
    await rfq.advance_to(record.quote.order_deadline + 1)
    return record


async def test_a_fill_reconciled_during_the_receipt_read_is_not_overwritten_by_failed(
    rfq: RfqHarness,
) -> None:
    record = await submitted_past_deadline(rfq)

    async def fill_lands_meanwhile() -> None:
        await rfq.fill_all(record, tx_hash=SPED_UP_TX)

    rfq.chain.on_receipt_read = fill_lands_meanwhile
    await rfq.settlement.sweep()  # the reported hash has no receipt: not_landed ... but filled
    assert (record.status, record.fail_reason, record.tx_hash) == ("filled", None, SPED_UP_TX)
    assert rfq.event_types() == [("rfq.filled", record.rfq_id)]


async def test_the_expired_event_goes_out_before_a_fill_reconciled_while_makers_are_told(
    rfq: RfqHarness,
) -> None:
    maker = rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None

    async def fill_lands_meanwhile(message: dict[str, Any]) -> None:
        if message["type"] == "expired":
            await rfq.fill_all(record)

    maker.on_told = fill_lands_meanwhile
    await rfq.advance_to(record.quote.expires_at)
    await rfq.settlement.sweep()
    assert (record.status, record.late, record.superseded) == ("filled", True, "expired")
    assert rfq.event_types() == [("rfq.expired", record.rfq_id), ("rfq.filled", record.rfq_id)]
    expired_body = rfq.events.events[0].body["data"]["rfq"]
    assert (expired_body["txHash"], expired_body["filledAt"]) == (None, None)
    assert rfq.events.events[1].body["data"]["rfq"]["supersedes"] == "rfq.expired"


async def test_an_undecided_submitted_rfq_is_not_due_again_at_once(rfq: RfqHarness) -> None:
    """Past its deadline a submitted RFQ waits for the chain (unreadable) or for its Fill logs
    (mined, not indexed yet): a due time in the past would make the sweeper loop without
    sleeping, and with the chain cut by the fault switch (the read fails without yielding)
    without ever letting the event loop run again."""
    record = await submitted_past_deadline(rfq)
    rfq.chain.unreadable = True
    await rfq.settlement.sweep()
    assert record.status == "submitted"
    due = rfq.settlement.next_due()
    assert due is None or due > rfq.clock.time()
    rfq.chain.unreadable = False
    rfq.chain.receipts[TX] = True
    await rfq.settlement.sweep()
    assert record.status == "submitted"
    due = rfq.settlement.next_due()
    assert due is None or due > rfq.clock.time()
    await rfq.fill_all(record)
    assert status(record) == "filled"
