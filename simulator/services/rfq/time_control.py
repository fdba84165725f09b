"""Per-object time controls (`/_sim/rfqs/{id}/...`, docs/decisions.md): one RFQ's
quote lapses now, one submitted RFQ's settlement stops waiting now, one ended RFQ gives back
its outstanding slot and taker reservation. Each runs the settlement's own transition for that
record alone; the service clock, the chains and every other RFQ stay as they are, so a caller
whose client signs with its own clock, and its live quotes, are not disturbed (which a global
`/_sim/clock/advance` does)."""

from __future__ import annotations

import math

from simulator.clock import Clock
from simulator.errors import Conflict, NotFound, UpstreamError
from simulator.services.rfq.funds import TakerFunds
from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.ports import ChainUnreadable, RfqStore, SlotLedger
from simulator.services.rfq.settlement import Settlement

# No longer live. An expired or failed RFQ still holds its caller's outstanding slot and the
# taker's reservation until latestOrderDeadline (spec 1-rfq-v2); filled and no_quote gave
# them back already.
ENDED = ("expired", "failed", "filled", "no_quote")


class RfqTimeControl:
    def __init__(
        self,
        clock: Clock,
        store: RfqStore,
        settlement: Settlement,
        slots: SlotLedger,
        funds: TakerFunds,
    ) -> None:
        self._clock = clock
        self._store = store  # the records (shared with the service and settlement)
        self._settlement = settlement
        self._slots = slots
        self._funds = funds

    def _record(self, rfq_id: str) -> StoredRfq:
        record = self._store.get(rfq_id)
        if record is None:
            raise NotFound(f"No RFQ {rfq_id}", details={"reason": "unknown_rfq"})
        return record

    async def expire(self, rfq_id: str) -> StoredRfq:
        """A quoted RFQ (cancelled or not) lapses now: its expiresAt becomes now (the whole
        second) and the settlement's expiry runs (status expired, rfq.expired, holds released,
        makers told). Its signed orders are untouched: a swap mined before their on-chain
        deadline is the late fill that corrects the expiry."""
        record = self._record(rfq_id)
        if record.status != "quoted":
            raise Conflict(
                f"Only a quoted RFQ can be made to lapse; {rfq_id} is {record.status}",
                details={"reason": "not_quoted", "status": record.status},
            )
        assert record.quote is not None
        now = self._clock.time()
        # The whole second: block times are whole seconds, so a swap mined after this call
        # reads filledAt >= expiresAt, as a late fill should. No await between the check and
        # the transition: a sweep cannot expire it twice.
        record.quote.expires_at = min(record.quote.expires_at, float(math.floor(now)))
        await self._settlement.expire(
            record, now, cause="made to lapse now (the per-object control)"
        )
        return record

    async def give_up(self, rfq_id: str) -> StoredRfq:
        """A submitted RFQ's settlement stops waiting for the reported transaction now, as
        when the order deadline passes: its receipt decides (not mined: failed `not_landed`,
        mined and reverted: failed `reverted`). A transaction mined and successful is 409
        `transaction_landed`: its fill settles the RFQ."""
        record = self._record(rfq_id)
        if record.status != "submitted":
            raise Conflict(
                f"Only a submitted RFQ's settlement can give up; {rfq_id} is {record.status}",
                details={"reason": "not_submitted", "status": record.status},
            )
        try:
            await self._settlement.give_up(record, self._clock.time())
        except ChainUnreadable as exc:
            raise UpstreamError(
                f"The receipt of {record.tx_hash} on chain {record.chain_id} cannot be read; "
                "nothing changed",
                details={"reason": "chain_unreachable", "chainIds": [record.chain_id]},
            ) from exc
        if record.status == "submitted":
            raise Conflict(
                f"{record.tx_hash} was mined and succeeded: its fill settles {rfq_id}",
                details={"reason": "transaction_landed", "status": "submitted"},
            )
        if record.status != "failed":  # a fill was reconciled during the receipt read
            raise Conflict(
                f"{rfq_id} became {record.status} meanwhile",
                details={"reason": "not_submitted", "status": record.status},
            )
        return record

    def release(self, rfq_id: str) -> StoredRfq:
        """An ended RFQ stops holding its caller's outstanding slot and its taker's reservation
        now, instead of at latestOrderDeadline. A live one (soliciting, quoted, submitted) is
        409: its slot is what the cap counts."""
        record = self._record(rfq_id)
        if record.status not in ENDED:
            raise Conflict(
                f"{rfq_id} is {record.status}: only an ended RFQ gives back its slot",
                details={"reason": "still_live", "status": record.status},
            )
        self._slots.release(rfq_id)
        self._funds.release(rfq_id)
        return record
