"""Several instances: the RFQs of an instance that left the venue, taken over by another
(docs/decisions.md SC19). A request for one takes it over where it lands (`record`); the
venue's first instance takes over, a batch at a time, the records each gone instance left
live (`departed`), so they expire, fail or fill without anyone asking. Either way the record's
fills mined while no instance held it are read back from the chain's index, so a fill the
survivor's indexer passed before it held the record still settles it."""

from __future__ import annotations

import logging
from collections.abc import Collection

from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.ports import FillReplay
from simulator.services.rfq.service import RfqService
from simulator.services.rfq.settlement import Settlement
from simulator.services.shared.owners import RecordOwners

log = logging.getLogger("rfqsim.take_over")

# An instance's lease can lapse for a moment while it still runs (its event loop held up): its
# live records are taken over only once it has been missing from the list this long.
MISSING_FOR_S = 3.0


class TakeOver:
    def __init__(
        self,
        service: RfqService,
        settlement: Settlement,
        owners: RecordOwners,
        fills: FillReplay,
    ) -> None:
        self._service = service
        self._settlement = settlement
        self._owners = owners
        self._fills = fills
        self._missing_since: dict[int, float] = {}  # gone instance -> when first seen gone

    async def record(self, rfq_id: str, holder: int) -> bool:
        """The RFQ `holder` (gone) held is this instance's from now, its missed fills
        applied; False when another instance took it over first, or no copy was kept."""
        record = await self._service.adopt(rfq_id, holder)
        if record is None:
            return False
        await self._missed_fills(record)
        return True

    def gone_for_sure(self, holder: int) -> None:
        """`holder` is known gone (its process exited): its live records are taken over at the
        next round, without the patience a lapsed lease gets."""
        self._missing_since[holder] = float("-inf")

    async def departed(self, alive: Collection[int], now: float) -> int:
        """Take over here a batch of the live records of the instances not in `alive` (as
        read at `now`, monotonic seconds) that have been missing for `MISSING_FOR_S`; how
        many were taken (another instance may have taken some first)."""
        orphans = await self._owners.orphans(alive)
        gone = {holder for holder, _ in orphans}
        self._missing_since = {h: self._missing_since.get(h, now) for h in gone}
        taken = 0
        for holder, rfq_id in orphans:
            if now - self._missing_since[holder] >= MISSING_FOR_S:
                taken += await self.record(rfq_id, holder)
        if taken:
            log.info("took over %d live RFQs of instances gone", taken)
        return taken

    async def _missed_fills(self, record: StoredRfq) -> None:
        if record.quote is None:
            return  # never quoted: no order to fill
        hashes = [order.order_hash for order in record.quote.orders]
        await self._fills.replay(
            record.chain_id, hashes, record.created_at, self._settlement.on_fill
        )
