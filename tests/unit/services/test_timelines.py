"""The bounded timelines, the change feed and the makers' reply summary, without a server."""

from __future__ import annotations

import json

from simulator.services.limit_orders.history import LIMIT_ORDER_STEPS
from simulator.services.ramp.history import TRANSFER_STEPS
from simulator.services.rfq.history import (
    HISTOGRAM_BIN_MS,
    HISTOGRAM_BINS,
    RFQ_STEPS,
    RfqHistory,
    summarize,
)
from simulator.services.shared.changes import ChangeFeed
from simulator.services.shared.timelines import (
    StatusStep,
    SubmittedStep,
    Timelines,
    TimelineState,
    render_steps,
    time_fields,
    typed_step,
)
from simulator.services.swaps.history import SWAP_STEPS
from tests.unit.services.ticks import Ticks


def test_only_the_last_n_objects_are_kept_and_steps_of_dropped_ones_are_ignored() -> None:
    timelines = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=3)
    for n in range(5):
        timelines.start(f"rfq_{n}", "soliciting", {"n": n})
    assert [t.object_id for t in timelines.newest_first()] == ["rfq_4", "rfq_3", "rfq_2"]
    timelines.step("rfq_0", "cancelled")  # dropped off: nothing happens
    timelines.status("rfq_1", "expired", "expiresAt passed unfilled")
    assert timelines.get("rfq_0") is None
    assert timelines.get("rfq_1") is None


def test_steps_are_named_when_read_with_their_offset_from_the_start() -> None:
    timelines = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10)
    timelines.start("rfq_1", "soliciting", {})
    timelines.step("rfq_1", "answered", "0xabc", "mq_1", "rejected", 12.5, "terms", "fee")
    timelines.status("rfq_1", "no_quote", "response")
    timeline = timelines.get("rfq_1")
    assert timeline is not None
    assert timeline.status == "no_quote"
    steps = render_steps(timeline, timelines.kinds)
    assert steps[0] == {
        "at": 101.0,
        "offset_ms": 500.0,
        "kind": "answered",
        "maker": "0xabc",
        "quote_id": "mq_1",
        "outcome": "rejected",
        "latency_ms": 12.5,
        "reason": "terms",
        "detail": "fee",
    }
    assert steps[1]["kind"] == "status"
    assert (steps[1]["status"], steps[1]["cause"]) == ("no_quote", "response")


def test_a_dump_is_json_and_loads_back_the_same_timelines() -> None:
    timelines = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10)
    timelines.start("rfq_1", "soliciting", {"makers": ["0xabc"], "sell_amount": "10"})
    timelines.step("rfq_1", "selected", "single", ["0xabc"], [["0xdef", "declined"]])
    state = TimelineState("rfq.timelines", timelines)
    dumped = json.loads(json.dumps(state.dump()))
    other = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10)
    TimelineState("rfq.timelines", other).load(dumped)
    before, after = timelines.get("rfq_1"), other.get("rfq_1")
    assert before is not None
    assert after is not None
    assert (after.status, after.summary, after.steps) == (
        before.status,
        before.summary,
        before.steps,
    )
    assert isinstance(after.steps[0], tuple)


def test_a_change_is_kept_once_for_every_reader_and_published_to_its_topics_readers() -> None:
    changes = ChangeFeed()
    changes.mark("rfqs", "rfq_0")  # nobody reads: nothing kept anywhere
    rfqs = changes.subscribe(frozenset({"rfqs"}))
    clock = changes.subscribe(frozenset({"clock"}))
    timelines = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10, changes=changes.mark)
    timelines.start("rfq_1", "soliciting", {})
    timelines.step("rfq_1", "cancelled")
    assert changes.changed.is_set()
    assert changes.take() == {"rfqs": {"rfq_1"}}
    assert not changes.changed.is_set()
    changes.publish({"rfqs": b"event: rfqs\n\n"})
    assert rfqs.take() == [b"event: rfqs\n\n"]
    assert not rfqs.wake.is_set()
    assert clock.take() == []
    changes.unsubscribe(rfqs)
    changes.unsubscribe(clock)
    timelines.step("rfq_1", "cancelled")
    assert changes.take() == {}


def test_a_late_answer_turns_silent_into_late_in_the_makers_counts() -> None:
    history = RfqHistory(Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10))
    history.answered("rfq_1", "0xAbC", "tx_test_a", "mq_1", "silent", 740.0)
    history.answered("rfq_1", "0xAbC", "tx_test_a", "mq_2", "quoted", 20.0)
    history.answered_late("rfq_1", "0xAbC", "tx_test_a", "mq_1", 900.0, "quote")
    summary = summarize(history.replies["0xabc"])
    assert summary.counts == {"silent": 0, "quoted": 1, "late": 1}
    assert (summary.p50_ms, summary.p99_ms) == (20.0, 900.0)
    assert summary.histogram[0] == 1  # 20 ms
    assert summary.histogram[min(HISTOGRAM_BINS - 1, int(900 // HISTOGRAM_BIN_MS))] == 1
    assert summarize(None).latencies_kept == 0


def test_closing_the_feed_wakes_every_reader_to_end() -> None:
    changes = ChangeFeed()
    readers = [changes.subscribe(frozenset({"rfqs"})), changes.subscribe(frozenset({"clock"}))]
    changes.close()
    assert all(r.closed and r.wake.is_set() for r in readers)


def test_an_update_changes_the_summary_and_tells_the_feed() -> None:
    changes = ChangeFeed()
    reader = changes.subscribe(frozenset({"rfqs"}))
    timelines = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10, changes=changes.mark)
    timelines.start("rfq_1", "soliciting", {"sell_amount": "10", "buy_amount": None})
    changes.take()
    timelines.update("rfq_1", buy_amount="9")
    timelines.update("rfq_gone", buy_amount="1")  # never started: nothing happens
    timeline = timelines.get("rfq_1")
    assert timeline is not None
    assert timeline.summary == {"sell_amount": "10", "buy_amount": "9"}
    assert changes.take() == {"rfqs": {"rfq_1"}}
    changes.unsubscribe(reader)


def test_a_kept_step_reads_back_as_its_kinds_named_tuple() -> None:
    timelines = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10)
    timelines.start("rfq_1", "soliciting", {})
    timelines.step("rfq_1", "submitted", "0xhash")
    timelines.status("rfq_1", "submitted", "the taker reported its transaction")
    state = TimelineState("rfq.timelines", timelines)
    other = Timelines("rfqs", Ticks(), RFQ_STEPS, capacity=10)
    TimelineState("rfq.timelines", other).load(json.loads(json.dumps(state.dump())))
    timeline = other.get("rfq_1")
    assert timeline is not None
    submitted, status = (typed_step(s, RFQ_STEPS) for s in timeline.steps)
    assert isinstance(submitted, SubmittedStep)
    assert (submitted.at, submitted.kind, submitted.tx_hash) == (101.0, "submitted", "0xhash")
    assert isinstance(status, StatusStep)
    assert status.cause == "the taker reported its transaction"
    # A step with other values (an older version's) is no typed step.
    assert typed_step((1.0, "submitted"), RFQ_STEPS) is None
    assert typed_step((1.0, "unknown", "x"), RFQ_STEPS) is None


def test_each_areas_step_table_names_its_kinds_values_and_statuses() -> None:
    for kinds in (RFQ_STEPS, SWAP_STEPS, LIMIT_ORDER_STEPS, TRANSFER_STEPS):
        assert kinds.statuses
        for step_type in kinds.types.values():
            assert step_type._fields[:2] == ("at", "kind")
            assert "at" in time_fields(step_type)
    assert RFQ_STEPS.names("responded") == ("status", "reason", "latency_ms", "expires_at")
    assert time_fields(RFQ_STEPS.types["responded"]) == {"at", "expires_at"}
    assert RFQ_STEPS.names("unknown") == ()
    assert "error" in RFQ_STEPS.statuses
    assert "SENDING" in TRANSFER_STEPS.statuses
