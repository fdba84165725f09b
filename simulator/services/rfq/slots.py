"""Outstanding-RFQ slots (spec 1-rfq-v2 "Limits"): 4 live firm quotes per API key or per client IP
without a key, 32 for rfq:aggregator keys. A quote holds its slot until it fills or its
latestOrderDeadline passes; a no-quote or an error releases it at once; submit and cancel do not.

A slot is taken provisionally when a firm request starts soliciting (so parallel requests cannot
all pass the check) and then either released or extended to the quote's latestOrderDeadline.

Over the cap, the 429 names `nextSlotFreeAt`, the earliest latestOrderDeadline among the live
quotes. While some of the owner's slots are still provisional (their auctions running), nobody
knows that time yet: `acquire` waits for those auctions to end (at most their provisional hold)
and then decides, so a burst's 429s name the quotes' deadlines (~2 minutes out) rather than the
provisional hold (~5 s), and a slot a no-quote gave back in the meantime is taken."""

from __future__ import annotations

import asyncio
import heapq
from dataclasses import dataclass

from pydantic import Field

from rfqkit.timestamps import from_unix, isoformat
from simulator.clock import Clock
from simulator.errors import RateLimited
from simulator.services.shared.state import SavedAttributes, StateParticipant, StateSchema


def over_cap(cap: int, next_free: float) -> RateLimited:
    """The cap's 429: no Retry-After; the next slot frees at `next_free`, the earliest
    latestOrderDeadline among the owner's live quotes (the earliest provisional hold while none
    is quoted yet), or when one fills."""
    return RateLimited(
        f"Outstanding-RFQ cap of {cap} reached",
        details={
            "reason": "outstanding_rfq_cap",
            "cap": cap,
            "nextSlotFreeAt": isoformat(from_unix(next_free)),
        },
    )


@dataclass
class Slot:
    owner: str  # the caller identity that holds it: key:<id> or ip:<address>
    rfq_id: str
    held_until: float  # simulator time; a slot past it no longer counts
    settled: bool = False  # held_until is a quote's latestOrderDeadline, not the provisional hold


class OutstandingSlots:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._slots: dict[str, Slot] = {}  # by rfq id
        self._by_owner: dict[str, set[str]] = {}  # rfq ids per owner
        # Per owner, (held_until, rfq id) entries, lazily pruned: a take costs O(log n) even
        # when load tests raise the cap to thousands of live quotes.
        self._ends: dict[str, list[tuple[float, str]]] = {}
        # Per owner with requests waiting in `acquire`: set (and dropped) when one of the
        # owner's slots settles or is released.
        self._changed: dict[str, asyncio.Event] = {}

    def _prune(self, owner: str) -> None:
        now = self._clock.time()
        ends = self._ends.get(owner, [])
        while ends and ends[0][0] <= now:
            _, rfq_id = heapq.heappop(ends)
            slot = self._slots.get(rfq_id)
            if slot is None or slot.owner != owner:
                continue
            if slot.held_until <= now:
                self.release(rfq_id)  # lapsed at its latestOrderDeadline
            else:
                heapq.heappush(ends, (slot.held_until, rfq_id))  # extended since

    def evict_lapsed(self) -> None:
        """Release every slot past its hold, whoever owns it (`count` does it per owner, and
        an owner who never asks again would keep its lapsed slots forever)."""
        for owner in list(self._ends):
            self._prune(owner)

    def count(self, owner: str) -> int:
        self._prune(owner)
        return len(self._by_owner.get(owner, ()))

    def _next_free(self, owner: str) -> float:
        ends = self._ends[owner]
        while (
            self._slots.get(ends[0][1]) is None or self._slots[ends[0][1]].held_until != ends[0][0]
        ):
            heapq.heappop(ends)  # stale entry: released or extended
        return ends[0][0]

    def _over_cap(self, owner: str, cap: int) -> RateLimited:
        slots = [self._slots[rfq_id] for rfq_id in self._by_owner.get(owner, ())]
        settled = [s.held_until for s in slots if s.settled]
        return over_cap(cap, min(settled) if settled else self._next_free(owner))

    def take(self, owner: str, rfq_id: str, cap: int, held_until: float) -> Slot:
        """Synchronous check-and-take: atomic on the event loop. Over the cap is 429."""
        if self.count(owner) >= cap:
            raise self._over_cap(owner, cap)
        slot = Slot(owner=owner, rfq_id=rfq_id, held_until=held_until)
        self._slots[rfq_id] = slot
        self._by_owner.setdefault(owner, set()).add(rfq_id)
        heapq.heappush(self._ends.setdefault(owner, []), (held_until, rfq_id))
        return slot

    async def acquire(self, owner: str, rfq_id: str, cap: int, hold_s: float) -> None:
        """`take` with a provisional hold of `hold_s` from now; over the cap while some of the
        owner's auctions are still running, waits for them first (see the module)."""
        while True:
            if self.count(owner) < cap:
                self.take(owner, rfq_id, cap, self._clock.time() + hold_s)
                return
            pending = [
                self._slots[other].held_until
                for other in self._by_owner.get(owner, ())
                if not self._slots[other].settled
            ]
            wait_s = min(pending) - self._clock.time() if pending else 0.0
            if wait_s <= 0:
                raise self._over_cap(owner, cap)
            changed = self._changed.setdefault(owner, asyncio.Event())
            try:
                async with asyncio.timeout(wait_s):
                    await changed.wait()
            except TimeoutError:
                raise self._over_cap(owner, cap) from None

    def _notify(self, owner: str) -> None:
        changed = self._changed.pop(owner, None)
        if changed is not None:
            changed.set()

    def extend(self, rfq_id: str, held_until: float) -> None:
        """The quote's latestOrderDeadline: the slot is settled."""
        slot = self._slots.get(rfq_id)
        if slot is not None:
            slot.held_until = held_until
            slot.settled = True
            heapq.heappush(self._ends.setdefault(slot.owner, []), (held_until, rfq_id))
            self._notify(slot.owner)

    def release(self, rfq_id: str) -> None:
        slot = self._slots.pop(rfq_id, None)
        if slot is not None:
            owned = self._by_owner.get(slot.owner)
            if owned is not None:
                owned.discard(rfq_id)
                if not owned:
                    del self._by_owner[slot.owner]
                    self._ends.pop(slot.owner, None)
            self._notify(slot.owner)

    def state(self, name: str) -> StateParticipant:
        return SavedAttributes(name, self, SlotsSaved)


class SlotsSaved(StateSchema):
    """What reset and snapshots put back of OutstandingSlots: every slot, by owner, and the
    heaps of their ends."""

    slots: dict[str, Slot] = Field(validation_alias="_slots")
    by_owner: dict[str, set[str]] = Field(validation_alias="_by_owner")
    ends: dict[str, list[tuple[float, str]]] = Field(validation_alias="_ends")
