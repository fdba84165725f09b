"""The limit-orders area (the v1 book) as handlers and the wiring see it: built together by
runtime/limit_orders.py `build_book` and reached through the `BOOK` app key."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.limit_orders.jobs import BookSweep
from simulator.services.limit_orders.service import BookService
from simulator.services.shared.events import EventLog
from simulator.services.shared.timelines import Timelines


@dataclass
class BookArea:
    service: BookService  # quotes, prepare/place, records, the order book, fills
    sweep: BookSweep  # the 5-minute sweep: provisional cancels and the late notices
    events: EventLog  # limit_order.* events (the webhooks area subscribes)
    history: Timelines  # every order's timeline (GET /_sim/limit-orders)
