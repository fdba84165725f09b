"""Settlement transitions (spec 1-rfq-v2 "States and transitions", docs/decisions.md R1, R2):
filled when every order's Fill is reconciled, expired at expiresAt, failed (not_landed,
reverted) once the order deadline passed for a reported transaction, late fills that correct
expired/failed within 24 hours, and nothing corrected after them."""

from __future__ import annotations

from simulator.api.rfq import schemas
from simulator.services.rfq.model import StoredRfq
from tests.unit.services.rfq.harness import NGNS, ONE, TAKER, TX, RfqHarness, status
from tests.unit.services.rfq.rfq_bodies import rfq_body

DAY_S = 24 * 3600.0


async def failed(rfq: RfqHarness) -> StoredRfq:
    record = await rfq.quoted()
    assert record.quote is not None
    rfq.service.submit(record, TX)
    await rfq.advance_to(record.quote.order_deadline + 1)
    await rfq.settlement.sweep()
    assert (record.status, record.fail_reason) == ("failed", "not_landed")
    return record


async def test_a_fill_settles_the_rfq_with_the_settled_amounts(rfq: RfqHarness) -> None:
    maker = rfq.maker(1)
    record = await rfq.quoted()
    quote = record.quote
    assert quote is not None
    (order,) = quote.orders
    await rfq.clock.advance(3)
    await rfq.settlement.on_fill(rfq.fill(order, tx_hash=TX))
    assert record.status == "filled"
    assert record.filled_at is not None
    assert abs(record.filled_at - rfq.clock.time()) < 1
    assert record.tx_hash == TX  # taken from the chain: /submit is optional
    assert (record.settled_sell, record.settled_buy, record.settled_fee) == (
        quote.taker_pays,
        order.maker_gives,
        order.fee_amount,
    )
    assert record.late is False
    assert rfq.event_types() == [("rfq.filled", record.rfq_id)]
    assert rfq_body(rfq) | {"filledAt": None} == {
        "id": record.rfq_id,
        "chainId": 97,
        "sellToken": record.sell_token,
        "buyToken": record.buy_token,
        "sellAmount": str(quote.taker_pays),
        "buyAmount": str(order.maker_gives),
        "feeAmount": str(order.fee_amount),
        "taker": TAKER.address,
        "txHash": TX,
        "filledAt": None,
        "failReason": None,
        "late": False,
        "supersedes": None,
        "previousFailReason": None,
    }
    (told,) = maker.told("filled")
    assert (told["quoteId"], told["rfqId"], told["txHash"]) == (order.quote_id, record.rfq_id, TX)
    assert told["makerGave"] == str(order.maker_gives)
    # A fill frees the slot, the taker's reservation and the maker's hold at once.
    assert rfq.slots.count(rfq.caller.identity) == 0
    assert await rfq.funds.committed(97, TAKER.address, record.sell_token) == 0
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == 0


async def test_a_submitted_rfq_fills_and_keeps_its_hash(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    rfq.service.submit(record, TX.upper().replace("0X", "0x"))
    assert (record.status, record.tx_hash) == ("submitted", TX)
    await rfq.fill_all(record)
    assert (record.status, record.tx_hash) == ("filled", TX)
    await rfq.settlement.on_fill(rfq.fill(record.quote.orders[0]))  # indexed twice
    assert rfq.event_types() == [("rfq.filled", record.rfq_id)]


async def test_a_bundle_settles_only_when_every_order_filled(rfq: RfqHarness) -> None:
    rfq.maker(1, depth=60 * ONE)
    rfq.maker(2, depth=60 * ONE)
    record = await rfq.quoted()
    assert record.quote is not None
    first, second = record.quote.orders
    await rfq.settlement.on_fill(rfq.fill(first, log_index=0))
    assert status(record) == "quoted"
    assert rfq.events.events == []
    await rfq.settlement.on_fill(rfq.fill(second, log_index=1))
    assert record.status == "filled"
    assert record.settled_buy == first.maker_gives + second.maker_gives
    assert record.settled_sell == record.quote.taker_pays


async def test_a_fill_of_someone_elses_order_settles_nothing(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    stranger = rfq.fill(record.quote.orders[0])
    stranger = type(stranger)(**{**stranger.__dict__, "order_hash": b"\x01" * 32})
    await rfq.settlement.on_fill(stranger)
    assert record.status == "quoted"
    assert rfq.store.by_order_hash(stranger.order_hash) is None
    assert rfq.event_types() == []


async def test_a_quote_expires_at_expires_at(rfq: RfqHarness) -> None:
    maker = rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    assert rfq.settlement.next_due() == record.quote.expires_at
    await rfq.advance_to(record.quote.expires_at - 0.5)
    await rfq.settlement.sweep()
    assert status(record) == "quoted"
    await rfq.advance_to(record.quote.expires_at)
    await rfq.settlement.sweep()
    assert record.status == "expired"
    assert record.provisional_since is not None
    assert rfq.event_types() == [("rfq.expired", record.rfq_id)]
    assert rfq_body(rfq)["failReason"] is None
    assert "late" not in rfq_body(rfq)
    (told,) = maker.told("expired")
    assert (told["quoteId"], told["rfqId"]) == (record.quote.orders[0].quote_id, record.rfq_id)
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == 0
    # The signed order can still settle: slot and reservation run to latestOrderDeadline.
    assert rfq.slots.count(rfq.caller.identity) == 1
    assert (
        await rfq.funds.committed(97, TAKER.address, record.sell_token) == record.quote.taker_pays
    )
    assert rfq.settlement.next_due() is None
    await rfq.settlement.sweep()
    assert len(rfq.events.events) == 1


async def test_the_expiry_grace_delays_the_stored_expiry(rfq: RfqHarness) -> None:
    rfq.maker(1)
    rfq.settings.expiry_grace_s = 5
    record = await rfq.quoted()
    assert record.quote is not None
    assert rfq.settlement.next_due() == record.quote.expires_at + 5
    await rfq.advance_to(record.quote.expires_at + 4)
    await rfq.settlement.sweep()
    assert status(record) == "quoted"
    await rfq.advance_to(record.quote.expires_at + 5)
    await rfq.settlement.sweep()
    assert record.status == "expired"


async def test_a_reported_transaction_that_never_lands_fails_not_landed(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    rfq.service.submit(record, TX)
    assert rfq.settlement.next_due() == record.quote.order_deadline + 0.001
    await rfq.advance_to(record.quote.order_deadline - 0.5)  # still executable
    await rfq.settlement.sweep()
    assert record.status == "submitted"
    assert rfq.chain.receipt_reads == []
    await rfq.clock.advance(1)
    await rfq.settlement.sweep()
    assert (record.status, record.fail_reason) == ("failed", "not_landed")
    assert rfq.chain.receipt_reads == [TX]
    assert rfq.event_types() == [("rfq.failed", record.rfq_id)]
    assert (rfq_body(rfq)["failReason"], rfq_body(rfq)["txHash"]) == ("not_landed", TX)


async def test_a_reverted_transaction_fails_reverted(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    rfq.service.submit(record, TX)
    rfq.chain.receipts[TX] = False
    await rfq.advance_to(record.quote.order_deadline + 1)
    await rfq.settlement.sweep()
    assert (record.status, record.fail_reason) == ("failed", "reverted")


async def test_a_mined_transaction_waits_for_its_fill_and_an_unreadable_chain_waits(
    rfq: RfqHarness,
) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    rfq.service.submit(record, TX)
    await rfq.advance_to(record.quote.order_deadline + 1)
    rfq.chain.unreadable = True
    await rfq.settlement.sweep()
    assert record.status == "submitted"  # decided on a later sweep, never guessed
    rfq.chain.unreadable = False
    rfq.chain.receipts[TX] = True
    await rfq.settlement.sweep()
    assert record.status == "submitted"  # mined and succeeded: its Fill logs are on the way
    await rfq.fill_all(record)
    assert (record.status, record.late) == ("filled", False)
    assert rfq.event_types() == [("rfq.filled", record.rfq_id)]


async def test_a_late_fill_after_expiry_supersedes_expired(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.expired()
    await rfq.clock.advance(30)
    await rfq.fill_all(record)
    assert (record.status, record.late, record.superseded) == ("filled", True, "expired")
    assert record.previous_fail_reason is None
    assert rfq.event_types() == [("rfq.expired", record.rfq_id), ("rfq.filled", record.rfq_id)]
    body = rfq_body(rfq)
    assert (body["late"], body["supersedes"], body["previousFailReason"]) == (
        True,
        "rfq.expired",
        None,
    )
    assert rfq.slots.count(rfq.caller.identity) == 0


async def test_a_late_fill_after_failure_clears_the_fail_reason(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await failed(rfq)
    await rfq.fill_all(record)
    assert (record.status, record.fail_reason, record.previous_fail_reason) == (
        "filled",
        None,
        "not_landed",
    )
    body = rfq_body(rfq)
    assert (body["late"], body["supersedes"], body["previousFailReason"]) == (
        True,
        "rfq.failed",
        "not_landed",
    )


async def test_a_fill_inside_the_correction_window_is_applied(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.expired()
    await rfq.clock.advance(DAY_S - 60)
    await rfq.fill_all(record)
    assert (record.status, record.late) == ("filled", True)


async def test_a_fill_after_the_correction_window_is_not_applied(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.expired()
    await rfq.clock.advance(DAY_S + 1)
    await rfq.fill_all(record)
    assert (record.status, record.late, record.filled_at) == ("expired", False, None)
    assert rfq.event_types() == [("rfq.expired", record.rfq_id)]


async def test_a_failure_is_not_corrected_after_the_window_either(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await failed(rfq)
    await rfq.clock.advance(DAY_S + 1)
    await rfq.fill_all(record)
    assert (record.status, record.fail_reason) == ("failed", "not_landed")
    assert rfq.event_types() == [("rfq.failed", record.rfq_id)]


async def test_every_event_and_a_read_of_the_same_rfq_show_the_same_values(
    rfq: RfqHarness,
) -> None:
    """rfq.failed, then the late rfq.filled that corrects it: each event's rfq object agrees
    with GET /v2/rfq/{rfq_id} on every field they share, read at the moment it was published."""
    rfq.maker(1)
    record = await failed(rfq)
    reads = [schemas.RfqRecord.model_validate(record).model_dump(mode="json")]
    assert record.quote is not None
    for order in record.quote.orders:
        await rfq.settlement.on_fill(rfq.fill(order, tx_hash=TX))
    reads.append(schemas.RfqRecord.model_validate(record).model_dump(mode="json"))
    assert rfq.event_types() == [("rfq.failed", record.rfq_id), ("rfq.filled", record.rfq_id)]
    for index, read in enumerate(reads):
        body = rfq_body(rfq, index)
        assert body["id"] == read["rfqId"]
        shared = set(body) & set(read)
        assert shared >= {"sellAmount", "buyAmount", "feeAmount", "txHash", "filledAt"}
        assert {k: body[k] for k in shared} == {k: read[k] for k in shared}
