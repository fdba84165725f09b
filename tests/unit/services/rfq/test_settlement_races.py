"""Settlement steps that await (a receipt read, a maker notification, the sweeper's sleep) while
the indexer may reconcile a fill: what the sweep decided before the await must not overwrite
or reorder what happened during it."""

from __future__ import annotations

from simulator.services.rfq.model import RfqRecord
from tests.unit.services.rfq.harness import TX, RfqHarness

# The same swap re-broadcast with more gas under another hash: the reported one never lands.
SPED_UP_TX = "0x" + "ef" * 32


async def submitted_past_deadline(rfq: RfqHarness) -> RfqRecord:
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
