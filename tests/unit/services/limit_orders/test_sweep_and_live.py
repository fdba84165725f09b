"""The 5-minute sweep's deliberately late notices, and the live view's freshness rule."""

from __future__ import annotations

import asyncio

from simulator.services.limit_orders.live import FreshHeads
from tests.unit.services.limit_orders.factory import CHAIN_ID
from tests.unit.services.limit_orders.harness import build, caller, place


async def test_expired_and_cancelled_are_sent_only_after_the_lag() -> None:
    h = build()
    expiring = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, deadline_in=300)
    cancelled = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, deadline_in=300)
    order = h.book.owned(caller(), cancelled)
    h.chain.spend_nonce(order.maker, order.nonce)
    await h.sweep.sweep()  # a sweep sees the spent nonce: provisional CANCELLED, stored
    assert h.book.owned(caller(), cancelled).cancelled_at is not None
    assert h.book_events.events == []
    # Past the deadline, a second or two short of the lag (the deadline is whole seconds).
    await h.clock.advance(300 + 598)
    await h.sweep.sweep()
    assert h.book_events.events == []
    await h.clock.advance(3)
    await h.sweep.sweep()
    sent = {e.id for e in h.book_events.events}
    assert sent == {f"limit_order.expired:{expiring}", f"limit_order.cancelled:{cancelled}"}
    await h.sweep.sweep()  # once only
    assert len(h.book_events.events) == 2
    event = next(e for e in h.book_events.events if e.type == "limit_order.expired")
    body = event.body["data"]["limitOrder"]
    assert set(body) == {
        "id",
        "chainId",
        "sellToken",
        "sellAmount",
        "buyToken",
        "buyAmount",
        "rateRay",
        "executionRateRay",
        "deadline",
        "txHash",
        "filledAt",
    }
    assert (body["txHash"], body["filledAt"]) == (None, None)
    assert event.partner_id == "ptn_a"


async def test_a_sweep_that_cannot_read_the_chain_sends_nothing_and_retries() -> None:
    h = build()
    order_id = await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, deadline_in=60)
    await h.clock.advance(60 + 601)
    h.chain.down = True
    await h.sweep.sweep()
    assert h.book_events.events == []
    h.chain.down = False
    await h.sweep.sweep()
    assert [e.id for e in h.book_events.events] == [f"limit_order.expired:{order_id}"]


async def test_sweep_cadence_is_tracked() -> None:
    h = build()
    await h.sweep.sweep()
    state = h.book.store.sweep
    assert state.runs == 1
    assert state.last_run_at is not None
    assert state.next_run_at == state.last_run_at + h.settings.sweep_interval_s
    assert h.sweep.next_due() == state.next_run_at


async def settle() -> None:
    """Let every ready task run (a few loop turns, no wall time)."""
    for _ in range(10):
        await asyncio.sleep(0)


class SlowHead:
    """A head read that takes a step of the event loop per call, counting its calls."""

    def __init__(self) -> None:
        self.started = 0
        self.block = 1
        self.release = asyncio.Event()

    async def head(self, chain_id: int) -> int:
        self.started += 1
        seen = self.block
        await self.release.wait()
        self.release.clear()
        return seen


async def test_fresh_heads_share_reads_but_never_one_started_before_the_caller() -> None:
    slow = SlowHead()
    heads = FreshHeads(slow)  # type: ignore[arg-type]
    first = asyncio.create_task(heads.fresh(CHAIN_ID))
    await settle()
    assert slow.started == 1
    # A new block is mined while the first read is in flight: later callers must see it.
    slow.block = 2
    second = asyncio.create_task(heads.fresh(CHAIN_ID))
    third = asyncio.create_task(heads.fresh(CHAIN_ID))
    await settle()
    assert slow.started == 1, "the next read waits for the one in flight"
    slow.release.set()
    assert await first == 1
    await settle()
    assert slow.started == 2, "second and third share one read, started after they asked"
    slow.release.set()
    assert (await second, await third) == (2, 2)


async def test_the_view_is_reread_only_when_the_head_moved_or_an_order_joined() -> None:
    h = build()
    await place(h, sell_amount=1600 * 10**6, buy_amount=10**6)
    await h.book.live.view(CHAIN_ID)
    reads = h.chain.resource_reads
    await h.book.live.view(CHAIN_ID)
    assert h.chain.resource_reads == reads
    h.chain.block += 1
    await h.book.live.view(CHAIN_ID)
    assert h.chain.resource_reads == reads + 1
    await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, fund=False)
    await h.book.live.view(CHAIN_ID)
    assert h.chain.resource_reads == reads + 2
