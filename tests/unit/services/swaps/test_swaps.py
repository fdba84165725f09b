"""Instant swaps over the fake chain: composition of whole orders, fillable false, holds, the
status transitions of docs/decisions.md, settlement from the index, submit, pages."""

from __future__ import annotations

import pytest

from simulator.errors import Conflict, InvalidRequest, NotFound
from simulator.services.swaps.model import NotFillable, SwapRecord
from simulator.services.swaps.service import SwapRequest, decode_cursor, encode_cursor
from tests.unit.services.limit_orders.factory import CHAIN_ID
from tests.unit.services.limit_orders.harness import (
    MAKER_KEYS,
    NGNS_T,
    USDC_T,
    Harness,
    build,
    caller,
    place,
)
from tests.unit.services.swaps.swap_requests import COST, TAKER, swap_request


async def three_orders(h: Harness) -> list[str]:
    return [
        await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, maker=0),
        await place(h, sell_amount=1590 * 10**6, buy_amount=10**6, maker=1),
        await place(h, sell_amount=1580 * 10**6, buy_amount=10**6, maker=2),
    ]


async def created(h: Harness, request: SwapRequest) -> SwapRecord:
    outcome = await h.swaps.create(caller(), request)
    assert isinstance(outcome, SwapRecord), outcome
    return outcome


async def test_a_swap_composes_whole_orders_best_rate_first() -> None:
    h = build()
    ids = await three_orders(h)
    record = await created(h, swap_request(2 * COST + 10))
    assert [o.order_id for o in record.orders] == ids[:2]
    assert record.sold == 2 * COST
    assert record.proceeds == 3190 * 10**6
    assert record.status == "QUOTED"
    assert record.batch_tx().to == record.reactor
    assert record.expires_at <= h.clock.time() + h.settings.swap_ttl_s


async def test_no_liquidity_and_partial_fill_are_nothing_to_build() -> None:
    h = build()
    nothing = await h.swaps.create(caller(), swap_request(COST))
    assert isinstance(nothing, NotFillable)
    assert nothing.reason == "no_liquidity"
    await three_orders(h)
    partial = await h.swaps.create(caller(), swap_request(2 * COST + 10, require_full_fill=True))
    assert isinstance(partial, NotFillable)
    assert (partial.reason, partial.available_sell_amount) == ("partial_fill", 2 * COST)
    exact = await created(h, swap_request(2 * COST, require_full_fill=True))
    assert exact.sold == 2 * COST


async def test_min_rate_and_steering() -> None:
    h = build()
    ids = await three_orders(h)
    rate_1590 = h.book.owned(caller(), ids[1]).rate_ray
    record = await created(h, swap_request(3 * COST, min_rate=rate_1590))
    assert [o.order_id for o in record.orders] == ids[:2]
    h2 = build()
    ids2 = await three_orders(h2)
    only_c = await created(h2, swap_request(3 * COST, restricted=[MAKER_KEYS[2].address]))
    assert [o.order_id for o in only_c.orders] == [ids2[2]]
    with pytest.raises(InvalidRequest):
        await h2.swaps.create(
            caller(),
            swap_request(COST, preferred=[MAKER_KEYS[0].address], restricted=[TAKER]),
        )


async def test_a_built_swap_holds_its_orders_until_it_ends() -> None:
    h = build()
    ids = await three_orders(h)
    first = await created(h, swap_request(COST))
    second = await created(h, swap_request(COST))
    assert [o.order_id for o in first.orders] == [ids[0]]
    assert [o.order_id for o in second.orders] == [ids[1]], "the held order is not offered"
    book = await h.book.order_book(
        caller(), chain_id=CHAIN_ID, sell_token=USDC_T.address, buy_token=NGNS_T.address
    )
    assert [o.order_id for o in book.offers] == [ids[2]]
    await h.clock.advance(h.settings.swap_ttl_s + 1)
    assert (await h.swaps.get(caller(), first.swap_id)).status == "EXPIRED"
    book = await h.book.order_book(
        caller(), chain_id=CHAIN_ID, sell_token=USDC_T.address, buy_token=NGNS_T.address
    )
    assert [o.order_id for o in book.offers] == ids


async def test_settlement_without_submit_fills_and_publishes_swap_filled() -> None:
    h = build()
    await three_orders(h)
    record = await created(h, swap_request(2 * COST))
    for order in record.orders:
        h.chain.mine_fill(order.order, TAKER, "0xabc", h.clock.time())
    got = await h.swaps.get(caller(), record.swap_id)  # the read finds the spent nonces
    assert got.status == "FILLED"
    assert got.tx_hash == "0xabc"
    (event,) = h.swap_events.events
    swap = event.body["data"]["swap"]
    assert event.id == f"swap.filled:{record.swap_id}"
    assert swap["soldAmount"] == str(2 * COST)
    assert swap["proceeds"] == str(3190 * 10**6)
    assert swap["ordersFilled"] == 2
    assert set(swap) == {
        "id",
        "chainId",
        "txHash",
        "soldAmount",
        "proceeds",
        "effectiveRateRay",
        "ordersFilled",
        "filledAt",
    }


async def test_an_order_filled_by_someone_else_cancels_a_quoted_swap() -> None:
    h = build()
    await three_orders(h)
    record = await created(h, swap_request(COST))
    h.chain.mine_fill(record.orders[0].order, "0x" + "77" * 20, "0xdef", h.clock.time())
    got = await h.swaps.get(caller(), record.swap_id)
    assert (got.status, got.cancel_reason) == ("CANCELLED", "order_filled_elsewhere")
    assert h.swap_events.events == []


async def test_a_maker_spending_its_funds_cancels_a_quoted_swap_and_leaves_the_book() -> None:
    h = build()
    await three_orders(h)
    record = await created(h, swap_request(COST))
    h.chain.fund(NGNS_T.address, record.orders[0].maker, 0)
    got = await h.swaps.get(caller(), record.swap_id)
    assert (got.status, got.cancel_reason) == ("CANCELLED", "maker_unfunded")
    book = await h.book.order_book(
        caller(), chain_id=CHAIN_ID, sell_token=USDC_T.address, buy_token=NGNS_T.address
    )
    assert record.orders[0] not in book.offers


async def test_submit_rules() -> None:
    h = build()
    await three_orders(h)
    record = await created(h, swap_request(COST))
    with pytest.raises(NotFound):
        await h.swaps.submit(caller(), "sw_unknown", "0x" + "11" * 32)
    with pytest.raises(NotFound):
        await h.swaps.submit(caller("ptn_b"), record.swap_id, "0x" + "11" * 32)
    done = await h.swaps.submit(caller(), record.swap_id, "0x" + "11" * 32)
    assert done.status == "SUBMITTED"
    again = await h.swaps.submit(caller(), record.swap_id, "0x" + "11" * 32)
    assert again.status == "SUBMITTED"
    with pytest.raises(Conflict) as other:
        await h.swaps.submit(caller(), record.swap_id, "0x" + "22" * 32)
    assert other.value.details == {"reason": "tx_hash_mismatch"}
    late = await created(h, swap_request(COST))
    await h.clock.advance(h.settings.swap_ttl_s + 1)
    with pytest.raises(Conflict) as expired:
        await h.swaps.submit(caller(), late.swap_id, "0x" + "33" * 32)
    assert expired.value.details == {"reason": "not_submittable", "status": "EXPIRED"}


async def test_pages_newest_first_with_an_opaque_cursor_and_a_status_filter() -> None:
    h = build()
    for _ in range(5):
        await place(h, sell_amount=1600 * 10**6, buy_amount=10**6)
    made = [await created(h, swap_request(COST)) for _ in range(5)]
    first = await h.swaps.page(caller(), status=None, cursor=None, limit=2)
    assert [r.swap_id for r in first.swaps] == [made[4].swap_id, made[3].swap_id]
    assert first.next_cursor is not None
    second = await h.swaps.page(caller(), status=None, cursor=first.next_cursor, limit=2)
    assert [r.swap_id for r in second.swaps] == [made[2].swap_id, made[1].swap_id]
    last = await h.swaps.page(caller(), status=None, cursor=second.next_cursor, limit=2)
    assert ([r.swap_id for r in last.swaps], last.next_cursor) == ([made[0].swap_id], None)
    await h.swaps.submit(caller(), made[2].swap_id, "0x" + "44" * 32)
    submitted = await h.swaps.page(caller(), status="SUBMITTED", cursor=None, limit=50)
    assert [r.swap_id for r in submitted.swaps] == [made[2].swap_id]
    assert (await h.swaps.page(caller("ptn_b"), status=None, cursor=None, limit=50)).swaps == []
    assert decode_cursor(encode_cursor(42)) == 42
    for bad in ("garbage!", encode_cursor(1)[:-2] + "zz", "c3dhcHM6eA"):
        with pytest.raises(InvalidRequest):
            decode_cursor(bad)


async def test_an_order_leaves_the_book_at_its_deadline_even_from_a_cached_ranking() -> None:
    h = build()
    order_id = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, deadline_in=60)
    book = await h.book.order_book(
        caller(), chain_id=CHAIN_ID, sell_token=USDC_T.address, buy_token=NGNS_T.address
    )
    assert [o.order_id for o in book.offers] == [order_id]
    deadline = h.book.owned(caller(), order_id).deadline
    await h.clock.advance(deadline - h.clock.time() + 0.5)  # same block, same store epoch
    book = await h.book.order_book(
        caller(), chain_id=CHAIN_ID, sell_token=USDC_T.address, buy_token=NGNS_T.address
    )
    assert book.offers == []
    nothing = await h.swaps.create(caller(), swap_request(COST))
    assert isinstance(nothing, NotFillable)
