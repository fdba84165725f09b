"""The request gate (a state change waits for requests inside, cancels the slow ones, holds
new ones back, lets the fleet's own requests in while it restarts the fleet) and the journal's
filters, ring and redaction."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from simulator.services.sim.gate import RequestGate, StateChangeInterrupted
from simulator.services.sim.journal import FrameFilter, JournalFilter, RequestJournal, body_view
from tests.unit.state.journal_fields import request_fields


async def inside(gate: RequestGate, release: asyncio.Event) -> str:
    await gate.enter()
    task = asyncio.current_task()
    assert task is not None
    gate.track(task)
    try:
        await release.wait()
        return "done"
    finally:
        gate.untrack(task)


async def test_a_state_change_waits_for_the_requests_inside() -> None:
    gate = RequestGate(drain_s=30)
    release = asyncio.Event()
    request = asyncio.create_task(inside(gate, release))
    await asyncio.sleep(0)  # the request is inside
    order: list[str] = []

    async def change() -> None:
        async with gate.closed() as cancelled:
            order.append(f"changed (cancelled {cancelled})")

    changing = asyncio.create_task(change())
    await asyncio.sleep(0)
    assert order == []  # still draining
    release.set()
    assert await request == "done"
    await changing
    assert order == ["changed (cancelled 0)"]


async def test_a_request_still_running_after_the_drain_is_cancelled_and_marked() -> None:
    gate = RequestGate(drain_s=0.01)
    never = asyncio.Event()
    request = asyncio.create_task(inside(gate, never))
    await asyncio.sleep(0)
    async with gate.closed() as cancelled:
        assert cancelled == 1
    assert request.cancelled()


async def test_new_requests_wait_for_the_gate_and_give_up_after_wait_s() -> None:
    gate = RequestGate(drain_s=1, wait_s=0.05)
    entered = asyncio.Event()
    hold = asyncio.Event()

    async def change() -> None:
        async with gate.closed():
            entered.set()
            await hold.wait()

    changing = asyncio.create_task(change())
    await entered.wait()
    with pytest.raises(StateChangeInterrupted):
        await gate.enter()
    waiting = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    assert not waiting.done()
    hold.set()
    await changing
    gate.wait_s = 5
    await waiting  # let in once the change is over


async def test_while_the_fleet_restarts_only_its_own_requests_pass_the_closed_gate() -> None:
    gate = RequestGate(drain_s=1, wait_s=5)
    restarting = asyncio.Event()
    restarted = asyncio.Event()
    order: list[str] = []

    async def change() -> None:
        async with gate.closed():
            with gate.own_requests_admitted():
                restarting.set()
                await gate.enter(own=True)  # the restarted fleet's first round: at once
                order.append("fleet")
                await restarted.wait()

    changing = asyncio.create_task(change())
    await restarting.wait()
    client = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    assert order == ["fleet"]
    assert not client.done(), "a client waits for the new state, makers and all"
    restarted.set()
    await changing
    await client
    assert not gate.admitting_own
    # Before the new state is in place the fleet's requests wait like everyone's.
    gate.wait_s = 0.01
    async with gate.closed():
        with pytest.raises(StateChangeInterrupted):
            await gate.enter(own=True)


def journal_with(*entries: dict[str, object]) -> RequestJournal:
    journal = RequestJournal(lambda: 1000.0, capacity=3, stream_capacity=2)
    for index, fields in enumerate(entries):
        journal.record(**{**request_fields(index, 1000.0 + index), **fields})
    return journal


def test_filters_match_path_prefixes_method_status_since_and_id() -> None:
    journal = journal_with(
        {"path": "/v2/rfq/request", "method": "POST", "status": 400},
        {"path": "/v2/ramp/banks"},
        {"path": "/v2/rfq/rfq_1"},
    )

    def ids(**where: Any) -> list[str]:
        return [e.request_id for e in journal.requests(JournalFilter(**where))]

    assert ids() == ["req_2", "req_1", "req_0"]  # newest first
    assert ids(path="/v2/rfq/*") == ["req_2", "req_0"]
    assert ids(path="/v2/rfq") == []
    assert ids(method="post") == ["req_0"]
    assert ids(status=400) == ["req_0"]
    assert ids(since=1001.0) == ["req_2", "req_1"]
    assert ids(request_id="req_1") == ["req_1"]
    assert ids(limit=1) == ["req_2"]


def test_the_ring_keeps_the_newest_and_sequence_numbers_never_repeat() -> None:
    journal = journal_with({}, {}, {}, {})
    entries = journal.requests(JournalFilter())
    assert [e.request_id for e in entries] == ["req_3", "req_2", "req_1"]
    assert journal.clear() == 3
    journal.record(**{k: v for k, v in vars(entries[0]).items() if k != "seq"})
    assert journal.requests(JournalFilter())[0].seq == 5


def test_bodies_are_redacted_when_read() -> None:
    key = "tx_test_6ae2edaf29e7.X7j-oebgi6fxuM9RKuWBNDA-zhbeRA0s_35baqF6d1s"
    body = json.dumps({"key": key, "claimToken": "rfqc_abcdefABCDEF123456", "n": 1}).encode()
    shown = body_view(body, len(body))
    assert shown == {
        "key": "tx_test_6ae2edaf29e7.<redacted>",
        "claimToken": "rfqc_<redacted>",
        "n": 1,
    }
    assert body_view(None, 70_000) == {"omitted": True, "size": 70_000}
    assert body_view(b"not json", 8) == "not json"


def test_maker_frames_filter_by_maker_and_direction() -> None:
    journal = RequestJournal(lambda: 5.0, capacity=10, stream_capacity=10)
    journal.record_frame("tx_test_a", "0xAbC", "out", '{"type":"rfq"}')
    journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"quote"}')
    journal.record_frame("tx_test_b", "0xDef", "in", '{"type":"levels"}')
    frames = journal.frames(FrameFilter(makers=frozenset({"0xabc"}), limit=10))
    assert [(f.direction, f.text) for f, _ in frames] == [
        ("in", '{"type":"quote"}'),
        ("out", '{"type":"rfq"}'),
    ]
    assert len(journal.frames(FrameFilter(makers=frozenset({"tx_test_b"}), direction="out"))) == 0


def test_every_frame_of_an_rfq_is_tagged_with_it_quotes_included() -> None:
    journal = RequestJournal(lambda: 5.0, capacity=10, stream_capacity=10)
    journal.record_frame(
        "tx_test_a", "0xAbC", "out", '{"type":"rfq","quoteId":"mq_1","rfqId":"rfq_1"}'
    )
    journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"levels","chainId":97}')
    journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"quote","quoteId":"mq_1"}')
    journal.record_frame(
        "tx_test_a", "0xAbC", "out", '{"type":"released","quoteId":"mq_1","rfqId":"rfq_1"}'
    )
    journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"decline","quoteId":"mq_9"}')
    frames = journal.frames(FrameFilter(limit=10))
    tagged = [(json.loads(f.text)["type"], rfq) for f, rfq in frames]
    assert tagged == [
        ("decline", None),  # names a request the ring never saw
        ("released", "rfq_1"),
        ("quote", "rfq_1"),
        ("levels", None),
        ("rfq", "rfq_1"),
    ]
    only = journal.frames(FrameFilter(rfq_id="rfq_1"))
    assert [json.loads(f.text)["type"] for f, _ in only] == ["released", "quote", "rfq"]
