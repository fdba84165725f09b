"""The dispatcher and the delivery worker with a frozen clock and a scripted transport:
filtering by partner and event type, retries driven by clock advances, faults, redelivery and
concurrency bounds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from simulator.errors import Conflict, NotFound
from simulator.randomness import RandomSource
from simulator.runtime.webhooks import build_webhooks
from simulator.services.webhooks.outbox import signature_header
from simulator.services.webhooks.service import Webhooks
from simulator.settings import RETRY_SCHEDULE_S, WebhookSettings
from tests.unit.webhook_fakes import (
    START,
    WALL,
    FrozenClock,
    MemoryDeliveryArchive,
    RecordingCertificates,
    ScriptedTransport,
    rfq_event,
    settle,
)


@dataclass
class Rig:
    clock: FrozenClock
    transport: ScriptedTransport
    webhooks: Webhooks


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    clock = FrozenClock()
    transport = ScriptedTransport(clock)
    settings = WebhookSettings(max_concurrent_per_endpoint=3, max_concurrent=5)
    webhooks = build_webhooks(
        settings,
        clock,
        RandomSource(7),
        transport=transport,
        certificates=RecordingCertificates(),
        archive=MemoryDeliveryArchive(),
    )
    worker = asyncio.create_task(webhooks.worker.run())
    yield Rig(clock, transport, webhooks)
    transport.release.set()
    worker.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await worker


def _endpoint(rig: Rig, partner: str = "ptn_a", types: tuple[str, ...] = ("rfq.expired",)) -> str:
    return rig.webhooks.registry.create(partner, "https://a.example/hook", list(types)).endpoint_id


async def test_dispatcher_filters_by_partner_and_event_type(rig: Rig) -> None:
    registry, outbox = rig.webhooks.registry, rig.webhooks.outbox
    expired = registry.create("ptn_a", "https://a.example/1", ["rfq.expired"])
    both = registry.create("ptn_a", "https://a.example/2", ["rfq.filled", "rfq.expired"])
    other = registry.create("ptn_b", "https://b.example/", ["rfq.expired", "rfq.filled"])
    dispatcher = rig.webhooks.dispatcher
    dispatcher.publish(rfq_event("rfq.expired", "rfq_1", "ptn_a"))
    dispatcher.publish(rfq_event("rfq.filled", "rfq_2", "ptn_a"))
    dispatcher.publish(rfq_event("rfq.failed", "rfq_3", "ptn_a"))
    dispatcher.publish(rfq_event("rfq.expired", "rfq_4", None))  # keyless caller: nobody
    routed = sorted((d.event_id, d.endpoint_id) for d in outbox)
    assert routed == sorted(
        [
            ("rfq.expired:rfq_1", expired.endpoint_id),
            ("rfq.expired:rfq_1", both.endpoint_id),
            ("rfq.filled:rfq_2", both.endpoint_id),
        ]
    )
    assert all(d.endpoint_id != other.endpoint_id for d in outbox)
    first, second = outbox.find(event_id="rfq.expired:rfq_1")
    assert first.body is second.body  # serialized once per event
    assert first.delivery_id.startswith("whd_")
    assert first.delivery_id != second.delivery_id


async def test_delivers_at_once_signed_with_the_wall_clock_not_the_simulator_clock(
    rig: Rig,
) -> None:
    endpoint_id = _endpoint(rig)
    await rig.clock.advance(1234.9)
    rig.webhooks.dispatcher.publish(rfq_event())
    await settle(lambda: len(rig.transport.sent) == 1)
    sent = rig.transport.sent[0]
    endpoint = rig.webhooks.registry.get(endpoint_id)
    assert endpoint is not None
    t = int(WALL)  # not START + 1234.9: receivers check t against their own clock
    assert sent.headers == {
        "Content-Type": "application/json",
        "Service-Event-Id": "rfq.expired:rfq_1",
        "Service-Signature": signature_header(endpoint.signing_secret, t, sent.body),
    }
    await settle(lambda: rig.webhooks.outbox.find(status="delivered") != [])
    (delivery,) = rig.webhooks.outbox.find()  # finished: read back from the archive
    assert sent.body == delivery.body
    (attempt,) = delivery.attempts
    assert (attempt.number, attempt.response_status, attempt.outcome) == (1, 200, "succeeded")


@pytest.mark.parametrize("failure", [500, 302, "timeout", "error"])
async def test_failures_are_retried_after_five_simulated_seconds(
    rig: Rig, failure: int | str
) -> None:
    _endpoint(rig)
    rig.transport.script.append(failure)
    rig.webhooks.dispatcher.publish(rfq_event())
    (delivery,) = rig.webhooks.outbox
    await settle(lambda: len(delivery.attempts) == 1)
    assert delivery.attempts[0].outcome == "failed"
    assert delivery.next_attempt_at == START + 5
    await asyncio.sleep(0.05)
    assert len(rig.transport.sent) == 1  # real time passing does not retry
    await rig.clock.advance(4)
    await asyncio.sleep(0.02)
    assert len(rig.transport.sent) == 1
    await rig.clock.advance(1)
    await settle(lambda: delivery.status == "delivered")
    assert [a.number for a in delivery.attempts] == [1, 2]
    assert rig.transport.sent[1].at == START + 5


async def test_after_the_last_scheduled_attempt_the_delivery_failed(rig: Rig) -> None:
    _endpoint(rig)
    rig.transport.default = 503
    rig.webhooks.dispatcher.publish(rfq_event())
    (delivery,) = rig.webhooks.outbox
    for number, delay in enumerate(RETRY_SCHEDULE_S, start=1):
        if delay:
            await rig.clock.advance(delay)
        await settle(lambda n=number: len(delivery.attempts) == n)  # type: ignore[misc]
    assert delivery.status == "failed"
    assert delivery.next_attempt_at is None
    times = [s.at - START for s in rig.transport.sent]
    assert times == [sum(RETRY_SCHEDULE_S[:i]) for i in range(1, 11)]
    await rig.clock.advance(10 * 86400)
    await asyncio.sleep(0.02)
    assert len(rig.transport.sent) == 10


async def test_one_big_advance_makes_one_attempt_not_a_burst(rig: Rig) -> None:
    _endpoint(rig)
    rig.transport.default = 500
    rig.webhooks.dispatcher.publish(rfq_event())
    (delivery,) = rig.webhooks.outbox
    await settle(lambda: len(delivery.attempts) == 1)
    await rig.clock.advance(6 * 3600)
    await settle(lambda: len(delivery.attempts) == 2)
    await asyncio.sleep(0.02)
    assert len(delivery.attempts) == 2
    assert delivery.next_attempt_at == START + 6 * 3600 + 300


async def test_drop_first_fails_attempts_without_sending(rig: Rig) -> None:
    _endpoint(rig)
    rig.webhooks.faults.drop_first = 2
    rig.webhooks.dispatcher.publish(rfq_event())
    (delivery,) = rig.webhooks.outbox
    await settle(lambda: len(delivery.attempts) == 1)
    await rig.clock.advance(5)
    await settle(lambda: len(delivery.attempts) == 2)
    assert rig.transport.sent == []
    assert [(a.outcome, a.error, a.latency_ms) for a in delivery.attempts] == [
        ("dropped", "dropped_by_fault", None)
    ] * 2
    await rig.clock.advance(300)
    await settle(lambda: delivery.status == "delivered")
    assert len(rig.transport.sent) == 1


async def test_duplicate_sends_every_attempt_twice_with_the_same_bytes(rig: Rig) -> None:
    _endpoint(rig)
    rig.webhooks.faults.duplicate = True
    rig.webhooks.dispatcher.publish(rfq_event())
    (delivery,) = rig.webhooks.outbox
    await settle(lambda: len(delivery.attempts) == 2)
    first, second = rig.transport.sent
    assert (first.body, first.headers) == (second.body, second.headers)
    assert [(a.number, a.duplicate) for a in delivery.attempts] == [(1, False), (1, True)]
    assert delivery.status == "delivered"


async def test_delay_holds_each_attempt(rig: Rig) -> None:
    _endpoint(rig)
    rig.webhooks.faults.delay_ms = 150
    loop = asyncio.get_running_loop()
    began = loop.time()
    rig.webhooks.dispatcher.publish(rfq_event())
    await settle(lambda: len(rig.transport.sent) == 1)
    assert loop.time() - began >= 0.14


async def test_redeliver_is_an_extra_attempt_signed_afresh(rig: Rig) -> None:
    endpoint_id = _endpoint(rig)
    rig.transport.default = 500
    rig.webhooks.dispatcher.publish(rfq_event())
    (delivery,) = rig.webhooks.outbox
    await settle(lambda: len(delivery.attempts) == 1)
    await rig.clock.advance(2)
    rig.clock.wall += 3  # real time passed too
    rig.transport.default = 200
    redelivered = await rig.webhooks.worker.redeliver(delivery.delivery_id)
    assert redelivered is delivery
    assert delivery.status == "delivered"
    assert [(a.number, a.manual) for a in delivery.attempts] == [(1, False), (2, True)]
    first, again = rig.transport.sent
    assert first.body == again.body
    assert first.headers["Service-Signature"] != again.headers["Service-Signature"]
    assert again.headers["Service-Signature"].startswith(f"t={int(WALL + 3)},")
    with pytest.raises(NotFound):
        await rig.webhooks.worker.redeliver("whd_unknown")
    rig.webhooks.delete_endpoint("ptn_a", endpoint_id)
    with pytest.raises(Conflict):
        await rig.webhooks.worker.redeliver(delivery.delivery_id)


async def test_deleting_an_endpoint_cancels_its_pending_deliveries(rig: Rig) -> None:
    endpoint_id = _endpoint(rig)
    rig.transport.default = 500
    rig.webhooks.dispatcher.publish(rfq_event())
    (delivery,) = rig.webhooks.outbox
    await settle(lambda: len(delivery.attempts) == 1)
    rig.webhooks.delete_endpoint("ptn_a", endpoint_id)
    assert delivery.status == "cancelled"
    await rig.clock.advance(5)
    await asyncio.sleep(0.02)
    assert len(rig.transport.sent) == 1


async def test_attempts_to_one_endpoint_run_concurrently_but_bounded(rig: Rig) -> None:
    _endpoint(rig)
    rig.transport.default = "hang"
    for i in range(10):
        rig.webhooks.dispatcher.publish(rfq_event(rfq_id=f"rfq_{i}"))
    await settle(lambda: rig.transport.in_flight == 3)
    await asyncio.sleep(0.02)
    assert rig.transport.max_in_flight == 3  # max_concurrent_per_endpoint
    rig.transport.release.set()
    await settle(lambda: len(rig.transport.sent) == 10)
    assert rig.transport.max_in_flight == 3


async def test_global_bound_across_endpoints(rig: Rig) -> None:
    for i in range(3):
        rig.webhooks.registry.create("ptn_a", f"https://{i}.example/", ["rfq.expired"])
    rig.transport.default = "hang"
    for i in range(4):
        rig.webhooks.dispatcher.publish(rfq_event(rfq_id=f"rfq_{i}"))
    await settle(lambda: rig.transport.in_flight == 5)
    await asyncio.sleep(0.02)
    assert rig.transport.max_in_flight == 5  # max_concurrent
    rig.transport.release.set()
    await settle(lambda: len(rig.transport.sent) == 12)


async def test_a_hanging_endpoint_does_not_hold_up_another(rig: Rig) -> None:
    registry = rig.webhooks.registry
    registry.create("ptn_a", "https://slow.example/", ["rfq.expired"])
    rig.transport.hang_urls.add("https://slow.example/")
    for i in range(20):
        rig.webhooks.dispatcher.publish(rfq_event(rfq_id=f"rfq_slow_{i}"))
    await settle(lambda: rig.transport.in_flight == 3)
    registry.create("ptn_b", "https://fast.example/", ["rfq.expired"])
    rig.webhooks.dispatcher.publish(rfq_event(rfq_id="rfq_fast", partner_id="ptn_b"))
    (fast,) = rig.webhooks.outbox.find(event_id="rfq.expired:rfq_fast")
    await settle(lambda: fast.status == "delivered")
    assert rig.transport.in_flight == 3


async def test_stopping_the_worker_cancels_attempts_under_way() -> None:
    clock = FrozenClock()
    transport = ScriptedTransport(clock, default="hang")
    webhooks = build_webhooks(
        WebhookSettings(),
        clock,
        RandomSource(7),
        transport=transport,
        certificates=RecordingCertificates(),
        archive=MemoryDeliveryArchive(),
    )
    worker = asyncio.create_task(webhooks.worker.run())
    webhooks.registry.create("ptn_a", "https://a.example/", ["rfq.expired"])
    webhooks.dispatcher.publish(rfq_event())
    await settle(lambda: transport.in_flight == 1)
    worker.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await worker
    assert transport.in_flight == 0
