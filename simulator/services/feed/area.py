"""The rates feed area as handlers and the wiring see it: built by runtime/feed.py `build_feed`
and reached through the `FEED` app key."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.feed.service import FeedService


@dataclass
class FeedArea:
    service: FeedService
