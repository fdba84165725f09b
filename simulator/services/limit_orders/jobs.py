"""The limit-order sweep (spec 3 "Events"): every `sweep_interval_s` of simulator time (5 minutes
by default) it reads the nonces of the resting orders (a spent one with no fill found becomes a
provisional CANCELLED) and sends the deliberately late notices: limit_order.expired or
limit_order.cancelled once an order's deadline is `notify_lag_s` (10 minutes) behind, so a fill
just before the deadline reconciles first. A notice is sent once; a fill indexed later still
sends limit_order.filled, which supersedes it."""

from __future__ import annotations

import logging

from simulator.clock import Clock
from simulator.services.limit_orders.events import LimitOrderEvents
from simulator.services.limit_orders.model import LimitOrder, NoticeType
from simulator.services.limit_orders.ports import ChainUnreadable
from simulator.services.limit_orders.service import BookService
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import BookSettings

log = logging.getLogger("rfqsim.book")


def _awaiting_notice(order: LimitOrder, now: float, lag: float) -> bool:
    return (
        order.fill is None
        and not order.superseded
        and now >= order.deadline + lag
        and not ({"limit_order.expired", "limit_order.cancelled"} & order.notified)
    )


class BookSweep:
    def __init__(
        self,
        clock: Clock,
        venue: VenueDirectory,
        book: BookService,
        events: LimitOrderEvents,
        settings: BookSettings,
    ) -> None:
        self._clock = clock
        self._venue = venue
        self._book = book
        self._events = events
        self._settings = settings

    async def sweep(self) -> None:
        store = self._book.store
        started = self._clock.time()
        store.sweep.next_run_at = started + self._settings.sweep_interval_s
        for chain_id in list(self._venue.chains):
            try:
                await self._book.live.view(chain_id)  # resting orders: spent nonces -> CANCELLED
                await self._notify(chain_id)
            except ChainUnreadable as exc:
                log.info("book sweep: chain %s unreadable, next sweep retries: %s", chain_id, exc)
        store.prune(self._clock.time())
        store.sweep.last_run_at = started  # a completed sweep: everything due at `started` is done
        store.sweep.runs += 1

    async def _notify(self, chain_id: int) -> None:
        now = self._clock.time()
        lag = self._settings.notify_lag_s
        due = [
            o
            for o in self._book.store.orders.values()
            if o.chain_id == chain_id and _awaiting_notice(o, now, lag)
        ]
        if not due:
            return
        statuses = await self._book.statuses(chain_id, due)
        for order, status in zip(due, statuses, strict=True):
            if status.status == "FILLED" or not status.verified:
                continue  # filled meanwhile; or the nonce could not be read: next sweep
            event_type: NoticeType = (
                "limit_order.cancelled" if status.status == "CANCELLED" else "limit_order.expired"
            )
            order.notified.add(event_type)
            if status.status == "EXPIRED":
                self._book.history.status(order.order_id, "EXPIRED", "its deadline passed")
            self._events.publish(event_type, order, self._clock.time())

    def next_due(self) -> float:
        due = self._book.store.sweep.next_run_at
        return due if due is not None else self._clock.time()
