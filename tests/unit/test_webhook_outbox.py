"""The delivery outbox and its retry schedule, without any network or event loop."""

from __future__ import annotations

import itertools

import pytest

from simulator.services.shared.state import SavedAttributes
from simulator.services.webhooks.model import Attempt, Delivery
from simulator.services.webhooks.outbox import DeliveryOutbox, OutboxSaved
from simulator.settings import RETRY_SCHEDULE_S, load_settings
from tests.unit.webhook_fakes import MemoryDeliveryArchive

T0 = 1_800_000_000.0


def _delivery(delivery_id: str = "whd_1", endpoint_id: str = "whe_1") -> Delivery:
    return Delivery(
        delivery_id=delivery_id,
        endpoint_id=endpoint_id,
        partner_id="ptn_a",
        event_id="rfq.expired:rfq_1",
        event_type="rfq.expired",
        body=b"{}",
        created_at=T0,
    )


def _attempt(number: int, outcome: str = "failed", *, manual: bool = False) -> Attempt:
    return Attempt(
        number=number,
        started_at=T0,
        latency_ms=1.0,
        response_status=200 if outcome == "succeeded" else 500,
        error=None,
        outcome=outcome,  # type: ignore[arg-type]
        manual=manual,
    )


def _status(delivery: Delivery) -> str:
    return delivery.status  # read afresh (mypy narrows attributes across calls)


def _fail_scheduled(outbox: DeliveryOutbox, delivery: Delivery, now: float) -> None:
    assert outbox.take_due(now) == [delivery]
    number = outbox.start_attempt(delivery)
    outbox.finish_attempt(delivery, _attempt(number), now, scheduled=True)
    outbox.release(delivery)


def test_default_schedule_is_the_agreed_one() -> None:
    assert RETRY_SCHEDULE_S == (0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
    webhooks = load_settings().webhooks
    assert webhooks.retry_schedule_s == RETRY_SCHEDULE_S
    assert webhooks.ack_timeout_s == 15
    assert webhooks.allow_http is False


def test_first_attempt_is_immediate_then_each_delay_follows_the_previous_attempt() -> None:
    outbox = DeliveryOutbox(RETRY_SCHEDULE_S, MemoryDeliveryArchive())
    delivery = _delivery()
    outbox.add(delivery)
    assert outbox.next_due() == T0
    now = T0
    due_times = []
    for _ in RETRY_SCHEDULE_S:
        due = outbox.next_due()
        assert due is not None
        assert outbox.take_due(due - 0.001) == []  # not before its time
        due_times.append(due)
        now = due + 2.5  # the attempt ends 2.5 s after it started
        _fail_scheduled(outbox, delivery, now)
    gaps = [b - (a + 2.5) for a, b in itertools.pairwise(due_times)]
    assert gaps == list(RETRY_SCHEDULE_S[1:])
    assert delivery.status == "failed"
    assert delivery.next_attempt_at is None
    assert outbox.next_due() is None
    assert len(delivery.attempts) == len(RETRY_SCHEDULE_S) == 10


def test_a_success_acknowledges_and_stops_retries() -> None:
    outbox = DeliveryOutbox(RETRY_SCHEDULE_S, MemoryDeliveryArchive())
    delivery = _delivery()
    outbox.add(delivery)
    _fail_scheduled(outbox, delivery, T0)
    assert delivery.next_attempt_at == T0 + 5
    (taken,) = outbox.take_due(T0 + 5)
    outbox.finish_attempt(
        taken, _attempt(outbox.start_attempt(taken), "succeeded"), T0 + 5, scheduled=True
    )
    assert delivery.status == "delivered"
    assert outbox.next_due() is None
    assert [a.number for a in delivery.attempts] == [1, 2]


def test_an_attempt_in_flight_is_not_taken_twice() -> None:
    outbox = DeliveryOutbox(RETRY_SCHEDULE_S, MemoryDeliveryArchive())
    delivery = _delivery()
    outbox.add(delivery)
    assert outbox.take_due(T0) == [delivery]
    assert outbox.take_due(T0 + 10_000) == []
    assert outbox.next_due() is None


def test_manual_attempts_do_not_move_the_schedule() -> None:
    outbox = DeliveryOutbox(RETRY_SCHEDULE_S, MemoryDeliveryArchive())
    delivery = _delivery()
    outbox.add(delivery)
    _fail_scheduled(outbox, delivery, T0)
    number = outbox.start_attempt(delivery)
    outbox.finish_attempt(delivery, _attempt(number, manual=True), T0 + 1, scheduled=False)
    assert delivery.next_attempt_at == T0 + 5
    assert delivery.scheduled_attempts == 1
    assert delivery.status == "pending"


def test_a_manual_success_completes_a_failed_delivery() -> None:
    outbox = DeliveryOutbox((0, 5), MemoryDeliveryArchive())
    delivery = _delivery()
    outbox.add(delivery)
    _fail_scheduled(outbox, delivery, T0)
    _fail_scheduled(outbox, delivery, T0 + 5)
    assert delivery.status == "failed"
    number = outbox.start_attempt(delivery)
    outbox.finish_attempt(
        delivery, _attempt(number, "succeeded", manual=True), T0 + 9, scheduled=False
    )
    assert _status(delivery) == "delivered"
    assert [a.number for a in delivery.attempts] == [1, 2, 3]


def test_cancel_endpoint_stops_only_its_pending_deliveries() -> None:
    outbox = DeliveryOutbox(RETRY_SCHEDULE_S, MemoryDeliveryArchive())
    mine, other = _delivery("whd_1", "whe_1"), _delivery("whd_2", "whe_2")
    outbox.add(mine)
    outbox.add(other)
    assert outbox.cancel_endpoint("whe_1") == 1
    assert mine.status == "cancelled"
    assert outbox.take_due(T0) == [other]


def test_find_filters_and_limits() -> None:
    outbox = DeliveryOutbox(RETRY_SCHEDULE_S, MemoryDeliveryArchive())
    for i in range(5):
        outbox.add(_delivery(f"whd_{i}", f"whe_{i % 2}"))
    assert [d.delivery_id for d in outbox.find(endpoint_id="whe_0")] == ["whd_0", "whd_2", "whd_4"]
    assert [d.delivery_id for d in outbox.find(limit=2)] == ["whd_3", "whd_4"]
    assert outbox.find(status="delivered") == []
    assert len(outbox.find(event_id="rfq.expired:rfq_1")) == 5


def test_finished_deliveries_leave_memory_for_the_archive_and_pending_ones_stay() -> None:
    archive = MemoryDeliveryArchive()
    outbox = DeliveryOutbox((0,), archive)
    deliveries = [_delivery(f"whd_{i}") for i in range(4)]
    for delivery in deliveries:
        outbox.add(delivery)
    pending = _delivery("whd_pending")
    outbox.add(pending)
    for taken in outbox.take_due(T0):
        if taken is not pending:
            outbox.finish_attempt(taken, _attempt(outbox.start_attempt(taken)), T0, scheduled=True)
            assert taken.delivery_id not in archive.rows  # its attempt has not ended yet
            outbox.release(taken)
    assert [d.delivery_id for d in outbox] == ["whd_pending"]
    assert sorted(archive.rows) == ["whd_0", "whd_1", "whd_2", "whd_3"]
    listed = outbox.find()  # memory and archive, in creation order, each once
    assert [d.delivery_id for d in listed] == [d.delivery_id for d in [*deliveries, pending]]
    assert [d.status for d in listed] == ["failed"] * 4 + ["pending"]
    assert [d.delivery_id for d in outbox.find(limit=2)] == ["whd_3", "whd_pending"]
    assert [d.delivery_id for d in outbox.find(status="failed", limit=1)] == ["whd_3"]
    assert pending.status == "pending"


def test_a_finished_delivery_held_for_a_redelivery_is_listed_once_and_archived_after() -> None:
    archive = MemoryDeliveryArchive()
    outbox = DeliveryOutbox((0,), archive)
    delivery = _delivery()
    outbox.add(delivery)
    _fail_scheduled(outbox, delivery, T0)
    assert outbox.get("whd_1") is not delivery  # a copy read back from the archive
    held = outbox.hold("whd_1")
    assert held is not None
    assert outbox.hold("whd_1") is held  # a second redelivery works on the same object
    outbox.finish_attempt(
        held, _attempt(outbox.start_attempt(held), "succeeded"), T0, scheduled=False
    )
    outbox.finish_attempt(held, _attempt(outbox.start_attempt(held)), T0, scheduled=False)
    assert [(d.status, len(d.attempts)) for d in outbox.find()] == [("delivered", 3)]
    assert outbox.get("whd_1") is held
    outbox.release(held)
    assert archive.get("whd_1") is not None
    assert _status(archive.get("whd_1") or delivery) == "failed"  # one attempt still under way
    outbox.release(held)
    again = archive.get("whd_1")
    assert again is not None
    assert (again.status, [a.number for a in again.attempts]) == ("delivered", [1, 2, 3])
    assert [d.delivery_id for d in outbox] == []


def test_schedule_must_not_be_empty() -> None:
    with pytest.raises(ValueError, match="at least one"):
        DeliveryOutbox((), MemoryDeliveryArchive())


def test_finished_deliveries_are_forgotten_by_their_last_attempt() -> None:
    archive = MemoryDeliveryArchive()
    outbox = DeliveryOutbox((0.0,), archive)
    for i, ended in enumerate((10.0, 20.0, 30.0)):
        delivery = Delivery(
            delivery_id=f"whd_{i}",
            endpoint_id="we_1",
            partner_id="p",
            event_id=f"rfq.expired:rfq_{i}",
            event_type="rfq.expired",
            body=b"{}",
            created_at=ended - 1,
        )
        outbox.add(delivery)
        number = outbox.start_attempt(delivery)
        outbox.finish_attempt(
            delivery, Attempt(number, ended, 1.0, 200, None, "succeeded"), ended, scheduled=True
        )
    pending = Delivery("whd_p", "we_1", "p", "rfq.filled:rfq_9", "rfq.filled", b"{}", 5.0)
    outbox.add(pending)
    outbox.forget_finished_before(25.0)
    assert [d.delivery_id for d in outbox.find()] == ["whd_p", "whd_2"]  # pending ones stay


def test_an_attempt_from_before_a_restore_leaves_the_restored_delivery_alone() -> None:
    archive = MemoryDeliveryArchive()
    outbox = DeliveryOutbox((0,), archive)
    state = SavedAttributes("webhooks.outbox", outbox, OutboxSaved, after_load=outbox.restored)
    outbox.add(_delivery())
    saved = state.dump()
    (stale,) = outbox.take_due(T0)
    state.load(saved)  # the same id put back as it was, pending and due
    number = outbox.start_attempt(stale)
    outbox.finish_attempt(stale, _attempt(number, "succeeded"), T0, scheduled=True)
    outbox.release(stale)
    (restored,) = outbox
    assert restored is not stale
    assert (restored.status, restored.attempts) == ("pending", [])
    assert archive.rows == {}
    assert outbox.take_due(T0) == [restored]
