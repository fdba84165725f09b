"""Placing limit orders through the book service over a fake chain: the witness rebuilt at
submit, the checks and their 400s, idempotent re-submits, SUPERSEDED, and live statuses."""

from __future__ import annotations

import dataclasses

import pytest

from contracts.orders import permit_witness_typed_data
from simulator.errors import InvalidRequest, NotFound, UpstreamError
from simulator.services.limit_orders.placement import NOT_FUNDED, PrepareRequest
from tests.unit.services.limit_orders.factory import CHAIN_ID, PERMIT2
from tests.unit.services.limit_orders.harness import (
    MAKER_KEYS,
    NGNS_T,
    USDC_T,
    build,
    caller,
    place,
    sign,
    signed,
)


def request(h_now: float, **changes: object) -> PrepareRequest:
    fields: dict[str, object] = {
        "chain_id": CHAIN_ID,
        "maker": MAKER_KEYS[0].address,
        "sell_token": NGNS_T.address,
        "sell_amount": 1600 * 10**6,
        "buy_token": USDC_T.address,
        "buy_amount": 10**6,
        "pricing_mode": None,
        "margin_bps": 10,
        "deadline": int(h_now) + 600,
        "preferred": None,
        "restricted": None,
    }
    fields.update(changes)
    return PrepareRequest(**fields)  # type: ignore[arg-type]


async def test_prepare_derives_the_fee_and_binds_anyone_as_taker() -> None:
    h = build()
    prepared = await h.book.prepare(caller(), request(h.clock.time()))
    order = prepared.order
    assert order.taker == "0x0000000000000000000000000000000000000000"
    assert order.feeAmount == 10**6 * 5 // 10_000
    witness = prepared.typed_data["message"]["witness"]
    assert witness["feeAmount"] == str(order.feeAmount)
    assert prepared.typed_data["primaryType"] == "PermitWitnessTransferFrom"


async def test_deadline_is_capped_at_about_one_year() -> None:
    h = build()
    now = int(h.clock.time())
    prepared = await h.book.prepare(caller(), request(now, deadline=now + 5 * 365 * 86_400))
    assert now + h.settings.max_deadline_s - 2 <= prepared.order.deadline
    assert prepared.order.deadline <= now + h.settings.max_deadline_s + 2


async def test_exactly_one_of_buy_amount_or_pricing() -> None:
    h = build()
    with pytest.raises(InvalidRequest) as both:
        await h.book.prepare(caller(), request(h.clock.time(), pricing_mode="fastFill"))
    assert both.value.details == {"reason": "exactly_one_price"}
    with pytest.raises(InvalidRequest):
        await h.book.prepare(caller(), request(h.clock.time(), buy_amount=None))


async def test_an_output_too_small_to_carry_the_fee_is_refused() -> None:
    h = build()
    with pytest.raises(InvalidRequest) as refused:
        await h.book.prepare(caller(), request(h.clock.time(), buy_amount=1999))
    assert refused.value.details is not None
    assert refused.value.details["minimum"] == "2000"


async def test_the_submitted_order_is_the_signed_witness_and_resubmits_are_idempotent() -> None:
    h = build()
    who = caller()
    prepared = await h.book.prepare(who, request(h.clock.time()))
    account = MAKER_KEYS[0]
    h.chain.fund(NGNS_T.address, account.address, 1600 * 10**6)
    body = signed(prepared.order, sign(prepared.typed_data, account.key))
    order, status = await h.book.place(who, body)
    assert status.status == "ACTIVE"
    assert order.order == prepared.order
    again, status = await h.book.place(who, body)
    assert again is order
    # Even after it filled, the same id comes back with the status that tells.
    h.chain.mine_fill(order.order, "0x" + "99" * 20, "0xfeed", h.clock.time())
    await h.chain.catch_up(CHAIN_ID)
    again, status = await h.book.place(who, body)
    assert (again.order_id, status.status) == (order.order_id, "FILLED")


async def test_a_signature_by_someone_else_is_refused() -> None:
    h = build()
    prepared = await h.book.prepare(caller(), request(h.clock.time()))
    h.chain.fund(NGNS_T.address, MAKER_KEYS[0].address, 1600 * 10**6)
    forged = signed(prepared.order, sign(prepared.typed_data, MAKER_KEYS[1].key))
    with pytest.raises(InvalidRequest) as refused:
        await h.book.place(caller(), forged)
    assert refused.value.details == {"reason": "invalid_signature"}


async def test_changed_terms_do_not_verify() -> None:
    h = build()
    prepared = await h.book.prepare(caller(), request(h.clock.time()))
    h.chain.fund(NGNS_T.address, MAKER_KEYS[0].address, 1600 * 10**6)
    body = signed(prepared.order, sign(prepared.typed_data, MAKER_KEYS[0].key))
    cheaper = dataclasses.replace(body, output_amount=body.output_amount - 1)
    with pytest.raises(InvalidRequest):
        await h.book.place(caller(), cheaper)


@pytest.mark.parametrize("short", ["balance", "allowance"])
async def test_unfunded_is_refused_with_the_specs_message(short: str) -> None:
    h = build()
    prepared = await h.book.prepare(caller(), request(h.clock.time()))
    h.chain.fund(NGNS_T.address, MAKER_KEYS[0].address, 1600 * 10**6 - 1)
    body = signed(prepared.order, sign(prepared.typed_data, MAKER_KEYS[0].key))
    with pytest.raises(InvalidRequest) as refused:
        await h.book.place(caller(), body)
    assert refused.value.message == NOT_FUNDED == "Order batch is not funded"


async def test_a_spent_nonce_is_refused_and_an_unreadable_chain_is_502() -> None:
    h = build()
    prepared = await h.book.prepare(caller(), request(h.clock.time()))
    h.chain.fund(NGNS_T.address, MAKER_KEYS[0].address, 1600 * 10**6)
    body = signed(prepared.order, sign(prepared.typed_data, MAKER_KEYS[0].key))
    h.chain.down = True
    with pytest.raises(UpstreamError):
        await h.book.place(caller(), body)
    h.chain.down = False
    h.chain.spend_nonce(MAKER_KEYS[0].address, prepared.order.nonce)
    with pytest.raises(InvalidRequest) as refused:
        await h.book.place(caller(), body)
    assert refused.value.details == {"reason": "nonce_used"}


async def test_a_newer_order_on_the_same_nonce_supersedes_the_active_one() -> None:
    h = build()
    who = caller()
    account = MAKER_KEYS[0]
    h.chain.fund(NGNS_T.address, account.address, 10**12)
    first = await h.book.prepare(who, request(h.clock.time()))
    older, _ = await h.book.place(who, signed(first.order, sign(first.typed_data, account.key)))
    second = await h.book.prepare(who, request(h.clock.time(), buy_amount=2 * 10**6))
    replacement = dataclasses.replace(second.order, nonce=first.order.nonce)
    typed = permit_witness_typed_data(replacement, CHAIN_ID, PERMIT2)
    newer, status = await h.book.place(who, signed(replacement, sign(typed, account.key)))
    assert status.status == "ACTIVE"
    assert (await h.book.status_of(older)).status == "SUPERSEDED"
    assert (await h.book.status_of(newer)).status == "ACTIVE"


async def test_records_are_partner_scoped() -> None:
    h = build()
    order_id = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6)
    assert h.book.owned(caller("ptn_a"), order_id).order_id == order_id
    with pytest.raises(NotFound):
        h.book.owned(caller("ptn_b"), order_id)
    assert h.book.of_wallet(caller("ptn_b"), CHAIN_ID, MAKER_KEYS[0].address, 50) == []


async def test_a_cancel_reads_cancelled_and_a_late_fill_supersedes_it() -> None:
    h = build()
    order_id = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6)
    order = h.book.owned(caller(), order_id)
    h.chain.spend_nonce(order.maker, order.nonce)  # the maker invalidates its nonce
    assert (await h.book.status_of(order)).status == "CANCELLED"
    assert h.chain.catch_ups == 1, "a spent nonce makes the index catch up before CANCELLED"
    fill = h.chain.mine_fill(order.order, "0x" + "99" * 20, "0xbeef", h.clock.time())
    await h.chain.deliver(fill)  # type: ignore[misc]
    status = await h.book.status_of(order)
    assert (status.status, status.verified) == ("FILLED", True)
    assert [e.type for e in h.book_events.events] == ["limit_order.filled"]


async def test_a_fill_not_yet_indexed_reads_filled_not_cancelled() -> None:
    h = build()
    order_id = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6)
    order = h.book.owned(caller(), order_id)
    h.chain.mine_fill(order.order, "0x" + "99" * 20, "0xbeef", h.clock.time())
    assert (await h.book.status_of(order)).status == "FILLED"


async def test_expired_at_read_time_and_unverified_when_the_chain_is_down() -> None:
    h = build()
    order_id = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, deadline_in=60)
    order = h.book.owned(caller(), order_id)
    await h.clock.advance(61)
    status = await h.book.status_of(order)
    assert (status.status, status.verified) == ("EXPIRED", True)
    h.chain.down = True
    status = await h.book.status_of(order)
    assert (status.status, status.verified) == ("EXPIRED", False)
