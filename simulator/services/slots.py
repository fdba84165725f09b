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

    def _live(self, owner: str) -> list[Slot]:
        now = self._clock.time()
        return [s for s in self._slots.values() if s.owner == owner and s.held_until > now]

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
        self._forget_expired()
        slot = Slot(owner=owner, rfq_id=rfq_id, held_until=held_until)
        self._slots[rfq_id] = slot
        return slot

    def extend(self, rfq_id: str, held_until: float) -> None:
        slot = self._slots.get(rfq_id)
        if slot is not None:
            slot.held_until = held_until

    def release(self, rfq_id: str) -> None:
        self._slots.pop(rfq_id, None)

    def _forget_expired(self) -> None:
        now = self._clock.time()
        for rfq_id in [r for r, s in self._slots.items() if s.held_until <= now]:
            del self._slots[rfq_id]
