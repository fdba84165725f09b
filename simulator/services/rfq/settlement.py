"""Settlement: fills seen on chain, quotes lapsing, reported transactions that never land, and
the 24-hour correction window (spec 1-rfq-v2 "States and transitions").

- quoted or submitted + a fill of every order → filled (settled amounts replace the echo);
- quoted + expiresAt (+ grace) passes → expired;
- submitted + the order deadline passes without the fill → failed (`not_landed`, or `reverted`
  when the reported transaction was mined and reverted);
- failed or expired + a fill within 24 h → filled with late=true (supersedes …);
  after 24 h nothing is corrected."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from rfqkit.maker_protocol import Expired, Filled
from simulator.clock import Clock
from simulator.services.rfq.deps import RfqDeps
from simulator.services.rfq.events import RfqEvents
from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.ports import ChainUnreadable, RfqStore, TxStatusReader
from simulator.services.shared.fills import Fill

log = logging.getLogger("rfqsim.settlement")

CORRECTION_WINDOW_S = 24 * 3600.0


@dataclass
class SettlementSettings:
    expiry_grace_s: float = 0.0  # expired is stored at expiresAt (+ grace)
    correction_window_s: float = CORRECTION_WINDOW_S
    # A record at rest is kept this long past the correction window, then forgotten (404).
    retention_s: float = 3600.0
    # A record at rest this long leaves memory for the history archive (store.py `spill`).
    in_memory_s: float = 60.0


class Settlement:
    def __init__(
        self,
        clock: Clock,
        store: RfqStore,
        deps: RfqDeps,
        events: RfqEvents,
        receipts: TxStatusReader,
        settings: SettlementSettings,
    ) -> None:
        self._clock = clock
        self._store = store  # the records, their order index, fills seen and the trade history
        self._deps = deps
        self._events = events
        self._receipts = receipts
        self.settings = settings

    def _environment(self, chain_id: int) -> str:
        chain = self._deps.venue.chain(chain_id)
        assert chain is not None, "records only exist for configured chains"
        return chain.environment

    async def on_fill(self, fill: Fill) -> None:
        record = self._store.by_order_hash(fill.order_hash)
        if record is None:
            return  # not one of our RFQ quotes (a v1 order, or someone else's)
        rfq_id = record.rfq_id
        seen = self._store.fill_of(rfq_id, fill.order_hash)
        if seen is not None and seen.key == fill.key:
            return  # handed again (re-indexed, or replayed at a take-over): seen already
        environment = self._environment(fill.chain_id)
        assert record.quote is not None, "only quoted RFQs are found by their orders' hashes"
        filled_order = next(o for o in record.quote.orders if o.order_hash == fill.order_hash)
        await self._deps.makers.notify(
            fill.maker,
            environment,
            Filled(
                quote_id=filled_order.quote_id,
                rfq_id=rfq_id,
                chain_id=fill.chain_id,
                order_hash="0x" + fill.order_hash.hex(),
                tx_hash=fill.tx_hash,
                maker_gave=fill.input_amount,
                maker_received=fill.output_amount,
                fee_amount=fill.fee_amount,
            ),
        )
        self._deps.history.step(
            rfq_id,
            "fill",
            fill.maker,
            fill.tx_hash,
            fill.block_number,
            str(fill.input_amount),
            str(fill.output_amount),
            str(fill.fee_amount),
        )
        fills = self._store.add_fill(rfq_id, fill)
        assert record.quote is not None
        if len(fills) < len(record.quote.orders):
            return  # a bundle settles in one transaction: wait for its other Fill logs
        self._settle(record, fills)

    def _settle(self, record: StoredRfq, fills: list[Fill]) -> None:
        if record.status == "filled":
            return
        now = self._clock.time()
        cause = "every order's fill seen on chain"
        if record.status in ("expired", "failed"):
            since = record.provisional_since or now
            if now - since > self.settings.correction_window_s:
                log.info(
                    "fill of %s after the 24 h correction window: not corrected", record.rfq_id
                )
                return
            record.late = True
            cause = f"a late fill corrects {record.status}"
            record.superseded = record.status
            record.previous_fail_reason = record.fail_reason
            record.fail_reason = None
        record.status = "filled"
        record.filled_at = max(f.block_time for f in fills)
        record.tx_hash = record.tx_hash if record.tx_hash == fills[0].tx_hash else fills[0].tx_hash
        record.settled_sell = sum(f.output_amount + f.fee_amount for f in fills)
        record.settled_buy = sum(f.input_amount for f in fills)
        record.settled_fee = sum(f.fee_amount for f in fills)
        self._deps.history.amounts(record.rfq_id, record.sell_amount, record.buy_amount)
        self._deps.history.status(record.rfq_id, "filled", cause)
        self._keep(record)
        # A fill frees the outstanding slot, the taker's reservation and the makers' holds.
        self._deps.slots.release(record.rfq_id)
        self._deps.funds.release(record.rfq_id)
        self._deps.inventory.release_rfq(record.rfq_id)
        self._events.publish("rfq.filled", record, now)

    async def sweep(self) -> None:
        """Apply every time-driven transition that is due now."""
        now = self._clock.time()
        for record in self._store.expiring(now - self.settings.expiry_grace_s):
            if record.status == "quoted":  # not filled while an earlier expiry awaited
                await self.expire(record, now)
        for record in self._store.overdue(now):
            try:
                await self.give_up(record, now)
            except ChainUnreadable:
                continue  # decide on a later sweep, when the chain answers

    async def expire(
        self, record: StoredRfq, now: float, cause: str = "expiresAt passed unfilled"
    ) -> None:
        """quoted -> expired: the sweep's transition once expiresAt has passed, and the
        per-object control's (services/rfq/time_control.py)."""
        assert record.quote is not None
        record.status = "expired"
        record.provisional_since = now
        self._deps.history.status(record.rfq_id, "expired", cause)
        self._deps.inventory.release_rfq(record.rfq_id)
        self._deps.owners.rest(record.rfq_id)
        # Published before the makers are told (awaits): a fill reconciled meanwhile
        # then follows as the late rfq.filled, after the rfq.expired it corrects.
        self._events.publish("rfq.expired", record, now)
        if not record.cancelled:
            for order in record.quote.orders:
                await self._deps.makers.notify(
                    order.maker,
                    self._environment(record.chain_id),
                    Expired(quote_id=order.quote_id, rfq_id=record.rfq_id),
                )

    async def give_up(self, record: StoredRfq, now: float) -> None:
        """submitted -> failed once settlement stops waiting for the reported transaction (the
        order deadline passed, or the per-object control says so): `not_landed`, or `reverted`
        when it was mined and reverted. A transaction mined and successful leaves the record
        submitted (its Fill logs are on their way); ChainUnreadable when the receipt cannot be
        read."""
        reason = await self._fail_reason(record)
        if reason is None:
            return  # mined and succeeded: its Fill logs are on their way
        if record.status != "submitted":
            # Checked again after the receipt read: a fill reconciled meanwhile (the
            # swap re-broadcast under another hash) has settled it, and filled is final.
            return
        record.status = "failed"
        record.fail_reason = reason
        self._deps.history.status(record.rfq_id, "failed", f"gave up on the transaction: {reason}")
        record.provisional_since = now
        self._deps.inventory.release_rfq(record.rfq_id)
        self._deps.owners.rest(record.rfq_id)
        self._events.publish("rfq.failed", record, now)

    def _keep(self, record: StoredRfq) -> None:
        """Several instances: the record's copy follows a fill (sent at once, not awaited). An
        expiry or a failure is not copied (only taken off the live records: `rest`): an
        instance that takes the record over by a request comes to the same one by its own
        sweep (its event may then be delivered twice: at least once)."""
        self._deps.owners.keep(record.rfq_id, self._store.copy(record), live=False)

    def evict(self) -> int:
        """Forget the records nothing can change any more: at rest for longer than the
        correction window plus the retention; move those at rest for longer than `in_memory_s`
        to the archive. Also drops lapsed outstanding slots and taker reservations of callers
        that never came back. Returns how many records were forgotten."""
        now = self._clock.time()
        self._deps.slots.evict_lapsed()
        self._deps.funds.evict_lapsed()
        keep_s = self.settings.correction_window_s + self.settings.retention_s
        forgotten = self._store.evict_at_rest(now - keep_s)
        self._store.spill(now - self.settings.in_memory_s)
        return forgotten

    async def _fail_reason(self, record: StoredRfq) -> str | None:
        assert record.tx_hash is not None
        status = await self._receipts.receipt_status(record.chain_id, record.tx_hash)
        if status is None:
            return "not_landed"
        return "reverted" if status is False else None

    def next_due(self) -> float | None:
        """The earliest simulator time at which sweep() has something to do: the next expiresAt
        of a quoted RFQ (+ grace), or the next order deadline of a submitted one. A submitted
        RFQ already past its deadline when the last sweep looked is not due at a time: that
        sweep could not decide (chain unreadable, or mined with its Fill logs not indexed yet),
        and the sweeper's regular wake looks again. A due time in the past would make it loop
        without sleeping, and without ever yielding when the read fails at once (the chain
        fault switch)."""
        due: list[float] = []
        if (expiry := self._store.next_expiry()) is not None:
            due.append(expiry + self.settings.expiry_grace_s)
        if (deadline := self._store.next_deadline()) is not None:
            due.append(deadline + 0.001)
        return min(due, default=None)
