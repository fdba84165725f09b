"""Outstanding-RFQ slots (spec 1-rfq-v2 "Limits"): 4 live firm quotes per API key or per client IP
without a key, 32 for rfq:aggregator keys. A quote holds its slot until it fills or its
latestOrderDeadline passes; a no-quote or an error releases it at once; submit and cancel do not.

A slot is taken provisionally when a firm request starts soliciting (so parallel requests cannot
all pass the check) and then either released or extended to the quote's latestOrderDeadline."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.clock import Clock, from_unix, isoformat
from simulator.errors import RateLimited


@dataclass
class Slot:
    owner: str  # the caller identity that holds it: key:<id> or ip:<address>
    rfq_id: str
    held_until: float  # simulator time; a slot past it no longer counts


class OutstandingSlots:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._slots: dict[str, Slot] = {}  # by rfq id
        self._by_owner: dict[str, set[str]] = {}  # rfq ids per owner

    def _live(self, owner: str) -> list[Slot]:
        now = self._clock.time()
        live = []
        for rfq_id in list(self._by_owner.get(owner, ())):
            slot = self._slots[rfq_id]
            if slot.held_until > now:
                live.append(slot)
            else:
                self.release(rfq_id)  # lapsed at its latestOrderDeadline
        return live

    def count(self, owner: str) -> int:
        return len(self._live(owner))

    def take(self, owner: str, rfq_id: str, cap: int, held_until: float) -> Slot:
        """Synchronous check-and-take: atomic on the event loop. Over the cap is 429 without
        Retry-After; the next slot frees at the earliest held_until (or when a quote fills)."""
        live = self._live(owner)
        if len(live) >= cap:
            next_free = min(s.held_until for s in live)
            raise RateLimited(
                f"Outstanding-RFQ cap of {cap} reached",
                details={
                    "reason": "outstanding_rfq_cap",
                    "cap": cap,
                    "nextSlotFreeAt": isoformat(from_unix(next_free)),
                },
            )
        slot = Slot(owner=owner, rfq_id=rfq_id, held_until=held_until)
        self._slots[rfq_id] = slot
        self._by_owner.setdefault(owner, set()).add(rfq_id)
        return slot

    def extend(self, rfq_id: str, held_until: float) -> None:
        slot = self._slots.get(rfq_id)
        if slot is not None:
            slot.held_until = held_until

    def release(self, rfq_id: str) -> None:
        slot = self._slots.pop(rfq_id, None)
        if slot is not None:
            owned = self._by_owner.get(slot.owner)
            if owned is not None:
                owned.discard(rfq_id)
                if not owned:
                    del self._by_owner[slot.owner]
