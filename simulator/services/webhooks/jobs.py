"""The delivery worker: drains the outbox through the transport port. It sleeps on the simulator
clock until the next scheduled attempt is due, or until new work arrives, whichever comes first.
Attempts run as tasks bounded overall and per endpoint, so one slow receiver cannot hold up
another and ordering per endpoint is not guaranteed (as the spec allows: receivers dedupe on the
event id)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

from simulator.clock import Clock
from simulator.errors import Conflict, NotFound
from simulator.services.webhooks.model import Attempt, Delivery
from simulator.services.webhooks.outbox import (
    DeliveryFaults,
    DeliveryOutbox,
    delivery_headers,
    is_acknowledged,
)
from simulator.services.webhooks.ports import SendResult, WebhookTransport
from simulator.services.webhooks.registry import WebhookEndpointRecord, WebhookRegistry
from simulator.settings import WebhookSettings

log = logging.getLogger("rfqsim.webhooks")


class DeliveryWorker:
    def __init__(
        self,
        clock: Clock,
        registry: WebhookRegistry,
        outbox: DeliveryOutbox,
        faults: DeliveryFaults,
        transport: WebhookTransport,
        settings: WebhookSettings,
    ) -> None:
        self._clock = clock
        self._registry = registry
        self._outbox = outbox
        self._faults = faults
        self._transport = transport
        self._settings = settings
        self._wake = asyncio.Event()  # set when a delivery is added or rescheduled
        self._slots = asyncio.Semaphore(settings.max_concurrent)  # attempts in flight, overall
        self._endpoint_slots: dict[str, asyncio.Semaphore] = {}  # attempts in flight per endpoint
        self._tasks: set[asyncio.Task[Attempt | None]] = set()  # scheduled attempts under way
        outbox.add_listener(self._wake.set)

    async def run(self) -> None:
        """Deliver until cancelled; cancels the attempts under way when stopped."""
        try:
            while True:
                self._wake.clear()
                for delivery in self._outbox.take_due(self._clock.time()):
                    task = asyncio.create_task(
                        self._held_attempt(delivery, manual=False), name=delivery.delivery_id
                    )
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                if not self._wake.is_set():
                    await self._wait(self._outbox.next_due())
        finally:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _wait(self, due: float | None) -> None:
        waiters: list[asyncio.Future[object]] = [asyncio.ensure_future(self._wake.wait())]
        if due is not None:
            waiters.append(asyncio.ensure_future(self._clock.sleep_until(due)))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            for waiter in waiters:
                with contextlib.suppress(asyncio.CancelledError):
                    await waiter

    async def redeliver(self, delivery_id: str) -> Delivery:
        """One extra attempt now, signed afresh; it does not move the retry schedule. A
        finished delivery (in the archive) gets it too, and goes back there with it."""
        delivery = self._outbox.get(delivery_id)
        if delivery is None:
            raise NotFound("No such webhook delivery")
        if self._registry.get(delivery.endpoint_id) is None:
            raise Conflict(
                "The delivery's endpoint was deleted", details={"reason": "endpoint_deleted"}
            )
        held = self._outbox.hold(delivery_id)
        if held is None:  # forgotten by the retention sweep in between
            raise NotFound("No such webhook delivery")
        await self._held_attempt(held, manual=True)
        return held

    async def _held_attempt(self, delivery: Delivery, *, manual: bool) -> Attempt | None:
        """One attempt on a delivery the outbox holds for it (`take_due`, `hold`)."""
        try:
            return await self._attempt(delivery, manual=manual)
        finally:
            self._outbox.release(delivery)

    def _endpoint_slot(self, endpoint_id: str) -> asyncio.Semaphore:
        slot = self._endpoint_slots.get(endpoint_id)
        if slot is None:
            slot = self._endpoint_slots[endpoint_id] = asyncio.Semaphore(
                self._settings.max_concurrent_per_endpoint
            )
        return slot

    async def _attempt(self, delivery: Delivery, *, manual: bool) -> Attempt | None:
        endpoint = self._registry.get(delivery.endpoint_id)
        if endpoint is None:  # deleted while the attempt was due
            self._outbox.cancel_endpoint(delivery.endpoint_id)
            return None
        copy: Attempt | None = None
        # The endpoint's slot first: waiting for a slow endpoint must not hold a global slot.
        async with self._endpoint_slot(endpoint.endpoint_id), self._slots:
            number = self._outbox.start_attempt(delivery)
            faults = self._faults
            if faults.delay_ms > 0:
                await asyncio.sleep(faults.delay_ms / 1000)
            started_at = self._clock.time()
            if number <= faults.drop_first:
                attempt = Attempt(
                    number=number,
                    started_at=started_at,
                    latency_ms=None,
                    response_status=None,
                    error="dropped_by_fault",
                    outcome="dropped",
                    manual=manual,
                )
            else:
                # Signed per attempt over the stored bytes, with the wall-clock time it is sent:
                # a receiver checks `t` against its own clock (Stripe-style tolerance), so `t`
                # must not follow /_sim/clock/advance; the body keeps simulator time
                # .
                headers = delivery_headers(
                    delivery.event_id,
                    endpoint.signing_secret,
                    int(self._clock.wall_time()),
                    delivery.body,
                )
                attempt = await self._send(endpoint, delivery, headers, number, started_at, manual)
                if faults.duplicate:
                    copy = await self._send(
                        endpoint, delivery, headers, number, started_at, manual, duplicate=True
                    )
        self._outbox.finish_attempt(delivery, attempt, self._clock.time(), scheduled=not manual)
        if copy is not None:
            self._outbox.record_duplicate(delivery, copy)
        return attempt

    async def _send(
        self,
        endpoint: WebhookEndpointRecord,
        delivery: Delivery,
        headers: Mapping[str, str],
        number: int,
        started_at: float,
        manual: bool,
        *,
        duplicate: bool = False,
    ) -> Attempt:
        began = self._clock.monotonic()
        try:
            result = await self._transport.post(
                endpoint.url, delivery.body, headers, self._settings.ack_timeout_s
            )
        except Exception as exc:  # a transport bug must not strand the delivery
            log.exception("webhook transport failed for %s", delivery.delivery_id)
            result = SendResult(None, f"internal_error: {type(exc).__name__}")
        latency_ms = round((self._clock.monotonic() - began) * 1000, 3)
        return Attempt(
            number=number,
            started_at=started_at,
            latency_ms=latency_ms,
            response_status=result.status,
            error=result.error,
            outcome="succeeded" if is_acknowledged(result.status) else "failed",
            manual=manual,
            duplicate=duplicate,
        )
