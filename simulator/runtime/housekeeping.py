"""Bounded memory: every `retention.sweep_interval_s` of service time (at once on a clock
advance) the state that only grows unless someone looks is swept: RFQ records at rest past the
correction window and the retention, lapsed outstanding slots and taker reservations of callers
that never came back, ended limiter windows, stale proof nonces and lapsed grants. The same
sweep moves what is at rest to the history database (RFQ records at rest for
`retention.rfq_in_memory_s`, timelines that left memory) and forgets what is there past the same
horizon, the request journal's entries past `journal.kept_s`, and finished webhook deliveries
`webhooks.keep_finished_s` after their last attempt, and the rates feed's fills older than
`feed.keep_trades_s` (each a query on the file, not a walk; the feed's ticker windows drop the
seconds they no longer reach).
(Maker holds, idempotency records and the event log bound
themselves.)"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.tasks import running, step_forever
from simulator.api.http.appkeys import (
    ACCESS,
    CLOCK,
    FEED,
    JOURNAL,
    RFQ,
    SETTINGS,
    TIMELINES,
    WEBHOOKS,
)
from simulator.services.rfq.settlement import CORRECTION_WINDOW_S

log = logging.getLogger("rfqsim.housekeeping")


async def housekeeping_context(app: web.Application) -> AsyncIterator[None]:
    settlement = app[RFQ].settlement
    access = app[ACCESS]
    outbox = app[WEBHOOKS].outbox
    feed = app[FEED].service
    clock = app[CLOCK]
    keep_s = CORRECTION_WINDOW_S + app[SETTINGS].retention.rfq_after_correction_s
    keep_deliveries_s = app[SETTINGS].webhooks.keep_finished_s

    journal = app.get(JOURNAL)
    journal_kept_s = app[SETTINGS].journal.kept_s
    if journal is not None:
        journal.resume()  # numbers never repeat across a restart with a state directory
    timelines = list(app[TIMELINES].values())
    archives = {id(t.archive): t.archive for t in timelines if t.archive is not None}

    async def sweep() -> None:
        evicted = settlement.evict()
        access.limiter.evict_stale()
        access.proofs.evict_stale()
        outbox.forget_finished_before(clock.time() - keep_deliveries_s)
        for area_timelines in timelines:
            area_timelines.spill()  # what left memory since the last sweep, to the file
        for archive in archives.values():
            archive.forget_before(clock.time() - keep_s)
        if journal is not None:
            journal.forget_before(clock.time() - journal_kept_s)
        feed.forget()
        if evicted:
            log.debug("forgot %d RFQ record(s) at rest", evicted)

    periodic = step_forever(
        app[CLOCK],
        sweep,
        lambda: None,
        max_sleep_s=app[SETTINGS].retention.sweep_interval_s,
        log=log,
        what="housekeeping",
    )
    async with running(periodic, name="housekeeping"):
        yield
    if journal is not None:
        journal.save()  # the last requests, to the file before it closes
    feed.store.archive.save()  # the last fills too
