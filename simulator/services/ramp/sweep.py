"""The ramp's background work (spec 2-ramp-v2 "Events" 1, Limits; docs/ramp.md).

- every five minutes of simulator time: re-check every transfer nobody polls (unsettled, stored
  state older than 8 s; EXPIRED ones for three days after expiresAt), then the pending KYC
  reviews nobody watches (the customers service re-reads those older than its 15 s throttle);
- on a short tick: AWAITING_FUNDS transfers 10 minutes past expiresAt get one last provider read
  and become EXPIRED when it still shows nothing received.

`runtime/ramp_background.py` runs both loops on the simulator clock.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from simulator.clock import Clock
from simulator.services.ramp.model import TransferRecord
from simulator.services.ramp.ports import CustomerDirectory
from simulator.services.ramp.store import TransferStore
from simulator.services.ramp.tracking import TransferTracker
from simulator.services.shared.state import StateSchema

log = logging.getLogger("rfqsim.ramp.sweep")


@dataclass(frozen=True)
class SweepReport:
    at: float  # simulator time of the sweep
    transfers_checked: int  # provider reads made
    reviews_read: int  # pending KYC reviews re-read


class RampSweep:
    def __init__(
        self,
        clock: Clock,
        store: TransferStore,
        tracker: TransferTracker,
        customers: CustomerDirectory,
        interval_s: float = 300.0,
    ) -> None:
        self._clock = clock
        self._store = store
        self._tracker = tracker
        self._customers = customers
        self.interval_s = interval_s  # spec: every five minutes
        self.last: SweepReport | None = None  # the most recent sweep (tests, /_sim)
        self.runs = 0  # sweeps run since start

    async def sweep(self) -> SweepReport:
        now = self._clock.time()
        checked = 0
        for record in self._store.unsettled():
            if self._tracker.due(record, self._clock.time()) and await self._tracker.refresh(
                record
            ):
                checked += 1
        try:
            reviews = await self._customers.refresh_pending()
        except Exception:
            log.exception("background re-read of pending reviews failed")
            reviews = 0
        self.runs += 1
        self.last = SweepReport(at=now, transfers_checked=checked, reviews_read=reviews)
        log.debug("ramp sweep: %d transfers re-checked, %d reviews re-read", checked, reviews)
        return self.last

    async def expire_due(self) -> list[TransferRecord]:
        return await self._tracker.expire_due(self._store.unsettled())

    def next_expiry(self) -> float | None:
        return self._tracker.next_expiry(self._store.unsettled())


class RampSweepSaved(StateSchema):
    """What reset and snapshots put back of the ramp sweep: the last report and the count."""

    last: SweepReport | None
    runs: int
