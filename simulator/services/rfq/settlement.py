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
from dataclasses import dataclass, field

from simulator.clock import Clock
from simulator.services.rfq.deps import RfqDeps
from simulator.services.rfq.events import rfq_event
from simulator.services.rfq.model import RfqRecord
from simulator.services.rfq.ports import ChainUnreadable, TxStatusReader
from simulator.services.rfq.service import RfqService
from simulator.services.shared.events import EventSink

log = logging.getLogger("rfqsim.settlement")

CORRECTION_WINDOW_S = 24 * 3600.0
RECEIPT_RECHECK_S = 1.0  # an undecided receipt (unreadable chain, fill not indexed) waits this


@dataclass(frozen=True)
class Fill:
    """One reactor Fill event."""

    chain_id: int
    tx_hash: str  # lowercase 0x hex
    log_index: int
    block_time: float  # the block's timestamp (chain time follows the simulator clock)
    order_hash: bytes
    maker: str
    taker: str  # msg.sender of the execution (the wallet, or a router)
    input_token: str  # maker gave
    input_amount: int
    output_token: str  # maker received
    output_amount: int
    fee_amount: int

    @property
    def trade_id(self) -> str:
        return f"{self.tx_hash}-{self.log_index}"


@dataclass
class SettlementSettings:
    expiry_grace_s: float = 0.0  # DESIGN: stored status becomes expired at expiresAt (+ grace)
    correction_window_s: float = CORRECTION_WINDOW_S


@dataclass
class _Progress:
    fills: dict[bytes, Fill] = field(default_factory=dict)  # by order hash, for one RFQ


class Settlement:
    def __init__(
        self,
        clock: Clock,
        rfqs: RfqService,
        deps: RfqDeps,
        events: EventSink,
        receipts: TxStatusReader,
        settings: SettlementSettings,
    ) -> None:
        self._clock = clock
        self._rfqs = rfqs
        self._deps = deps
        self._events = events
        self._receipts = receipts
        self.settings = settings
        self.trades: list[Fill] = []  # every fill on every reactor (rates feed history)
        self._progress: dict[str, _Progress] = {}  # rfq id -> fills seen so far
        # rfq id -> when its reported receipt may be looked at again: without it an undecided
        # receipt stays due at once and the sweep would spin without ever yielding.
        self._recheck_at: dict[str, float] = {}

    async def on_fill(self, fill: Fill) -> None:
        self.trades.append(fill)
        rfq_id = self._rfqs.order_index.get(fill.order_hash)
        if rfq_id is None:
            return  # not one of our RFQ quotes (a v1 order, or someone else's)
        record = self._rfqs.records[rfq_id]
        environment = self._rfqs.chain(fill.chain_id).environment
        await self._deps.makers.notify(
            fill.maker,
            environment,
            {
                "type": "filled",
                "quoteId": next(
                    (o.quote_id for o in record.quote.orders if o.order_hash == fill.order_hash),
                    None,
                )
                if record.quote
                else None,
                "rfqId": rfq_id,
                "chainId": fill.chain_id,
                "orderHash": "0x" + fill.order_hash.hex(),
                "txHash": fill.tx_hash,
                "makerGave": str(fill.input_amount),
                "makerReceived": str(fill.output_amount),
                "feeAmount": str(fill.fee_amount),
            },
        )
        progress = self._progress.setdefault(rfq_id, _Progress())
        progress.fills[fill.order_hash] = fill
        assert record.quote is not None
        if len(progress.fills) < len(record.quote.orders):
            return  # a bundle settles in one transaction: wait for its other Fill logs
        self._settle(record, list(progress.fills.values()))

    def _settle(self, record: RfqRecord, fills: list[Fill]) -> None:
        if record.status == "filled":
            return
        now = self._clock.time()
        if record.status in ("expired", "failed"):
            since = record.provisional_since or now
            if now - since > self.settings.correction_window_s:
                log.info(
                    "fill of %s after the 24 h correction window: not corrected", record.rfq_id
                )
                return
            record.late = True
            record.superseded = record.status
            record.previous_fail_reason = record.fail_reason
            record.fail_reason = None
        record.status = "filled"
        record.filled_at = max(f.block_time for f in fills)
        record.tx_hash = record.tx_hash if record.tx_hash == fills[0].tx_hash else fills[0].tx_hash
        record.settled_sell = sum(f.output_amount + f.fee_amount for f in fills)
        record.settled_buy = sum(f.input_amount for f in fills)
        record.settled_fee = sum(f.fee_amount for f in fills)
        # A fill frees the outstanding slot, the taker's reservation and the makers' holds.
        self._deps.slots.release(record.rfq_id)
        self._deps.funds.release(record.rfq_id)
        self._deps.inventory.release_rfq(record.rfq_id)
        self._events.publish(rfq_event("rfq.filled", record, now))

    async def sweep(self) -> None:
        """Apply every time-driven transition that is due now."""
        now = self._clock.time()
        for record in list(self._rfqs.records.values()):
            quote = record.quote
            if quote is None:
                continue
            if record.status == "quoted" and now >= quote.expires_at + self.settings.expiry_grace_s:
                record.status = "expired"
                record.provisional_since = now
                if not record.cancelled:
                    for order in quote.orders:
                        await self._deps.makers.notify(
                            order.maker,
                            self._rfqs.chain(record.chain_id).environment,
                            {"type": "expired", "quoteId": order.quote_id, "rfqId": record.rfq_id},
                        )
                self._deps.inventory.release_rfq(record.rfq_id)
                self._events.publish(rfq_event("rfq.expired", record, now))
            elif record.status == "submitted" and now > quote.order_deadline:
                if self._recheck_at.get(record.rfq_id, 0.0) > now:
                    continue
                reason = await self._fail_reason(record)
                if reason is None:
                    # Mined and succeeded (its Fill logs are on their way), or the chain could
                    # not be read: look again a little later.
                    self._recheck_at[record.rfq_id] = now + RECEIPT_RECHECK_S
                    continue
                self._recheck_at.pop(record.rfq_id, None)
                record.status = "failed"
                record.fail_reason = reason
                record.provisional_since = now
                self._deps.inventory.release_rfq(record.rfq_id)
                self._events.publish(rfq_event("rfq.failed", record, now))

    async def _fail_reason(self, record: RfqRecord) -> str | None:
        assert record.tx_hash is not None
        try:
            status = await self._receipts.receipt_status(record.chain_id, record.tx_hash)
        except ChainUnreadable:
            return None  # decide on a later sweep, when the chain answers
        if status is None:
            return "not_landed"
        return "reverted" if status is False else None

    def next_due(self) -> float | None:
        """The earliest simulator time at which sweep() has something to do."""
        due: list[float] = []
        for record in self._rfqs.records.values():
            if record.quote is None:
                continue
            if record.status == "quoted":
                due.append(record.quote.expires_at + self.settings.expiry_grace_s)
            elif record.status == "submitted":
                due.append(
                    max(record.quote.order_deadline + 0.001, self._recheck_at.get(record.rfq_id, 0))
                )
        return min(due, default=None)
