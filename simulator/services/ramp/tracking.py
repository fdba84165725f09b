"""Keeping stored transfers in step with the provider: every provider view (webhook, re-check on
read, background sweep) goes through `TransferTracker.apply`, forward only; the re-check is
throttled to one provider call per 8 s per transfer and shared by concurrent readers; the
background expiry sets EXPIRED after one last provider read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from simulator.clock import Clock
from simulator.services.ramp.emails import Outbox
from simulator.services.ramp.model import (
    FUNDS_ARRIVED,
    Observation,
    TransferRecord,
    expire,
    observe,
)
from simulator.services.ramp.ports import ProviderError, ProviderTransfer, RampProvider
from simulator.services.shared.timelines import TimelineSink

log = logging.getLogger("rfqsim.ramp.tracking")

DAY_S = 86400.0


@dataclass(frozen=True)
class TrackingSettings:
    recheck_s: float = 8.0  # spec: at most one provider re-check per 8 s per transfer
    expire_after_s: float = 600.0  # spec: EXPIRED 10 minutes after expiresAt
    recheck_days: float = 3.0  # spec: EXPIRED transfers re-checked with the provider three days


class TransferTracker:
    def __init__(
        self,
        clock: Clock,
        providers: Callable[[str], RampProvider | None],
        outbox: Outbox,
        settings: TrackingSettings,
        history: TimelineSink,
    ) -> None:
        self._clock = clock
        self._providers = providers  # provider id -> its port (None while not connected)
        self._outbox = outbox
        self.settings = settings
        self._history = history  # every transfer's timeline (GET /_sim/transfers)
        # One lock per transfer, guarding its provider re-check: one provider read at a time;
        # readers that queue behind a read find the state fresh and share its result.
        self._locks: dict[str, asyncio.Lock] = {}
        self.provider_reads = 0  # provider transfer reads made by re-checks (bench, tests)

    def started(self, record: TransferRecord) -> None:
        """A transfer was stored (created, or a payout retry): its timeline begins."""
        self._history.start(
            record.id,
            record.status,
            {
                "chain_id": record.chain_id,
                "side": record.side,
                "fiat": record.fiat,
                "token": record.token,
                "source_amount": record.source_amount,
                "target_amount": record.target_amount,
                "wallet": record.wallet,
                "provider_status": record.provider_status,
                "expires_at": record.expires_at,
                "makers": [],
            },
        )
        self._history.step(
            record.id,
            "created",
            record.side,
            record.provider,
            record.provider_transfer_id,
            record.retry_of_id,
        )

    # -- applying what the provider says --------------------------------------------------

    def apply(self, record: TransferRecord, seen: ProviderTransfer, source: str) -> Observation:
        """Take one provider view of `record` (forward only), then send the emails it earns."""
        if seen.id != record.provider_transfer_id:
            log.warning(
                "%s for %s carries provider transfer %s, not %s: ignored",
                source,
                record.id,
                seen.id,
                record.provider_transfer_id,
            )
            return Observation(False, False, record.status, "other transfer")
        result = observe(record, seen, self._clock.time())
        outcome = "ignored" if not result.applied else "applied" if result.changed else "unchanged"
        self._history.step(
            record.id, "provider", source, seen.status, outcome, result.reason or None
        )
        if result.changed:
            timeline = self._history.get(record.id)
            if timeline is not None:
                timeline.summary["provider_status"] = record.provider_status
            if record.status != result.previous_status:
                self._history.status(
                    record.id, record.status, f"provider: {seen.status} ({source})"
                )
        if not result.applied:
            log.info("%s for %s ignored: %s", source, record.id, result.reason)
        elif result.changed:
            log.debug(
                "%s moved %s %s -> %s (%s)",
                source,
                record.id,
                result.previous_status,
                record.status,
                record.provider_status,
            )
            self._outbox.after_change(record, record.provider_status in FUNDS_ARRIVED)
        return result

    # -- re-checks -------------------------------------------------------------------------

    def tracked(self, record: TransferRecord, now: float) -> bool:
        """Still worth asking the provider about: not settled, and an EXPIRED transfer only
        for three days after its expiresAt."""
        if record.settled:
            return False
        if record.status == "EXPIRED":
            return now <= record.expires_at + self.settings.recheck_days * DAY_S
        return True

    def due(self, record: TransferRecord, now: float) -> bool:
        """Stored state older than 8 s and no provider call in the last 8 s."""
        last = max(record.state_at, record.checked_at)
        return self.tracked(record, now) and now - last > self.settings.recheck_s

    async def refresh(
        self, record: TransferRecord, *, confirmed_after: float | None = None
    ) -> bool:
        """Re-check `record` with the provider when due; True when a provider view was taken.

        `confirmed_after` (the expiry's last read) asks for a read unless the stored state was
        confirmed at or after that instant; a failed read is then retried at most every 8 s.
        A provider that cannot be reached leaves the stored state as it is."""
        lock = self._locks.setdefault(record.id, asyncio.Lock())
        async with lock:
            now = self._clock.time()
            if confirmed_after is None:
                if not self.due(record, now):
                    return False
            elif record.state_at >= confirmed_after or (
                record.checked_at >= confirmed_after
                and now - record.checked_at <= self.settings.recheck_s
            ):
                return False
            provider = self._providers(record.provider)
            record.checked_at = now
            if provider is None:
                return False
            self.provider_reads += 1
            try:
                seen = await provider.transfer(record.provider_transfer_id)
            except ProviderError as exc:
                log.info("re-check of %s failed: %s", record.id, exc)
                return False
            result = self.apply(record, seen, "re-check")
            if record.settled:
                self._locks.pop(record.id, None)
            return result.applied

    # -- the background expiry ---------------------------------------------------------

    def expiry_deadline(self, record: TransferRecord) -> float:
        return record.expires_at + self.settings.expire_after_s

    async def expire_due(self, records: list[TransferRecord]) -> list[TransferRecord]:
        """AWAITING_FUNDS transfers 10 minutes past expiresAt: one last provider read, then
        EXPIRED when it still shows nothing received. Returns the transfers expired now."""
        now = self._clock.time()
        expired = []
        for record in records:
            if record.status != "AWAITING_FUNDS":
                continue
            deadline = self.expiry_deadline(record)
            if now < deadline:
                continue
            await self.refresh(record, confirmed_after=deadline)
            if record.state_at < deadline:
                continue  # the provider did not answer: no verdict yet
            if expire(record, self._clock.time()):
                self._history.status(
                    record.id, "EXPIRED", "nothing received 10 minutes after expiresAt"
                )
                log.info("expired %s (nothing received by %s)", record.id, deadline)
                self._outbox.after_change(record, funds_arrived=False)
                expired.append(record)
        return expired

    def next_expiry(self, records: list[TransferRecord]) -> float | None:
        return min(
            (self.expiry_deadline(r) for r in records if r.status == "AWAITING_FUNDS"),
            default=None,
        )
