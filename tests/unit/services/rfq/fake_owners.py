"""The engine's record owners (adapters/redis/owners.py) in memory, for several instances in
one test: `VenueOwners` is the engine, `VenueOwners.at(n)` the `RecordOwners` of instance n."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field


def _done() -> Awaitable[None]:
    confirmed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    confirmed.set_result(None)
    return confirmed


@dataclass
class VenueOwners:
    owner: dict[str, int] = field(default_factory=dict)
    copies: dict[str, bytes] = field(default_factory=dict)
    live: dict[int, set[str]] = field(default_factory=dict)

    def at(self, instance: int) -> InstanceOwners:
        return InstanceOwners(self, instance)


class InstanceOwners:
    def __init__(self, venue: VenueOwners, here: int) -> None:
        self._venue = venue
        self._here = here

    def claim(self, record_id: str) -> Awaitable[None]:
        self._venue.owner[record_id] = self._here
        return _done()

    async def owner(self, record_id: str) -> int | None:
        return self._venue.owner.get(record_id)

    def keep(self, record_id: str, copy: Callable[[], bytes], live: bool) -> Awaitable[None]:
        self._venue.copies[record_id] = copy()
        if live:
            self._venue.live.setdefault(self._here, set()).add(record_id)
        else:
            self.rest(record_id)
        return _done()

    def rest(self, record_id: str) -> None:
        self._venue.live.get(self._here, set()).discard(record_id)

    async def take_over(self, record_id: str, holder: int) -> bytes | None:
        gone = self._venue.live.get(holder, set())
        was_live = record_id in gone
        gone.discard(record_id)
        if self._venue.owner.get(record_id) != holder:
            return None
        self._venue.owner[record_id] = self._here
        if was_live:
            self._venue.live.setdefault(self._here, set()).add(record_id)
        return self._venue.copies.get(record_id)

    async def orphans(self, alive: Collection[int]) -> list[tuple[int, str]]:
        return [
            (holder, record_id)
            for holder, ids in self._venue.live.items()
            if holder not in alive
            for record_id in sorted(ids)
        ]

    def forget_live(self) -> None:
        self._venue.live.pop(self._here, None)
