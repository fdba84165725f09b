"""The fill indexer: follows each chain's reactor `Fill` logs and hands every fill to its
subscribers (RFQ settlement, the rates feed's tape, the v1 book and swaps), whether or not the
taker reported its transaction and whether or not the order was ever quoted by us. After every
poll it reports whether it reached the chain's head (`IndexProgress`); `catch_up` scans up to the
head on demand, for a read that must not wait for the next poll."""

from __future__ import annotations

import asyncio
import bisect
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from eth_abi.abi import decode
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from rfqkit.chain import AnvilChain, ChainUnavailable
from simulator.services.shared.faults import Faults
from simulator.services.shared.fills import Fill, FillSubscriber, IndexProgress
from simulator.services.shared.state import StateSchema

log = logging.getLogger("rfqsim.indexer")

FILL_TOPIC = (
    "0x"
    + keccak(text="Fill(bytes32,address,address,address,uint256,address,uint256,uint256)").hex()
)
POLL_INTERVAL_S = 0.05  # Anvil mines on demand; polling this often keeps reconciliation fast
# Where the chain stood when: one (block time, block) of the fills scanned per this many seconds
# of chain time, the last this many kept (a day and more), so a replay starts near its time.
MARK_EVERY_S = 10.0
MARKS_KEPT = 10_000
REPLAY_MARGIN_S = 60.0  # a replay starts this long before the time it is given


def decode_fill(chain_id: int, log_entry: dict[str, Any], block_time: float) -> Fill:
    topics = log_entry["topics"]
    input_token, input_amount, output_token, output_amount, fee = decode(
        ["address", "uint256", "address", "uint256", "uint256"],
        bytes.fromhex(log_entry["data"][2:]),
    )
    return Fill(
        chain_id=chain_id,
        tx_hash=log_entry["transactionHash"].lower(),
        log_index=int(log_entry["logIndex"], 16),
        block_time=block_time,
        order_hash=bytes.fromhex(topics[1][2:]),
        maker=to_checksum_address("0x" + topics[2][-40:]),
        taker=to_checksum_address("0x" + topics[3][-40:]),
        input_token=to_checksum_address(input_token),
        input_amount=input_amount,
        output_token=to_checksum_address(output_token),
        output_amount=output_amount,
        fee_amount=fee,
        block_number=int(log_entry["blockNumber"], 16),
    )


class FillIndexer:
    def __init__(
        self,
        chain: AnvilChain,
        reactor: str,
        on_fill: FillSubscriber,
        faults: Faults | None = None,
        progress: IndexProgress | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._chain = chain
        self._faults = faults or Faults()  # /_sim/faults indexer_paused holds the index back
        self._reactor = reactor
        self._on_fill = on_fill  # one subscriber, or a FillFanout of several
        self._progress = progress or IndexProgress()  # told after every poll
        self._monotonic = monotonic
        self.next_block = 0  # first block not yet scanned
        # Bumped when next_block is put back (reset, snapshot restore): a poll that began before
        # drops what it read, since those logs are of a chain state that is gone.
        self.epoch = 0
        self.started_at = time.monotonic()  # when this indexer was created
        self.last_scan_at: float | None = None  # monotonic time of the last completed scan
        self._scan_lock = asyncio.Lock()  # one scan at a time: a fill is handed on exactly once
        # (block time, block number) marks, both ascending: where a replay may start
        self._marks: deque[tuple[float, int]] = deque(maxlen=MARKS_KEPT)

    async def catch_up(self) -> None:
        """Scan up to the head now (the background poll and this never overlap)."""
        await self.poll_once()

    async def rewind(self, chain_id: int) -> None:
        """The chain was restarted (on_chain_exit: restart): its blocks start again from 0."""
        if chain_id == self._chain.chain_id:
            self.next_block = 0
            self._marks.clear()

    def state_restored(self) -> None:
        self.epoch += 1
        self._marks.clear()  # the chain's blocks and times were put back

    async def replay(self, order_hashes: Sequence[bytes], since: float, to: FillSubscriber) -> int:
        """Hand `to` the Fill logs of these orders in the blocks already scanned, mined at
        `since` (chain time) or later as far as the marks tell: what a record taken over from
        another instance missed while no instance held it. Under the scan lock, so no poll
        hands any of them meanwhile (a later poll finds the record held). How many."""
        async with self._scan_lock:
            last = self.next_block - 1
            if last < 0 or not order_hashes:
                return 0
            times = [t for t, _ in self._marks]
            at = bisect.bisect_left(times, since - REPLAY_MARGIN_S)
            first = self._marks[at - 1][1] if at > 0 else 0
            wanted = ["0x" + h.hex() for h in order_hashes]
            logs = await self._logs(first, last, [FILL_TOPIC, wanted])
            block_times: dict[str, float] = {}
            for entry in logs:
                block_time = await self._block_time(entry["blockNumber"], block_times)
                await to(decode_fill(self._chain.chain_id, entry, block_time))
            return len(logs)

    async def _logs(self, first: int, last: int, topics: list[Any]) -> list[dict[str, Any]]:
        query = {"address": self._reactor, "topics": topics}
        found: list[dict[str, Any]] = await self._chain.rpc(
            "eth_getLogs", [{**query, "fromBlock": hex(first), "toBlock": hex(last)}]
        )
        return found

    async def _block_time(self, block: str, known: dict[str, float]) -> float:
        if block not in known:
            header = await self._chain.rpc("eth_getBlockByNumber", [block, False])
            known[block] = float(int(header["timestamp"], 16))
            number, last = int(block, 16), self._marks[-1] if self._marks else None
            if last is None or (known[block] - last[0] >= MARK_EVERY_S and number > last[1]):
                self._marks.append((known[block], number))
        return known[block]

    async def poll_once(self) -> int:
        """Scan new blocks; returns how many fills were handed on."""
        async with self._scan_lock:
            return await self._scan()

    async def _scan(self) -> int:
        chain_id = self._chain.chain_id
        epoch = self.epoch
        if chain_id in self._faults.indexer_paused:
            # Nothing is lost: scanning resumes from next_block when the switch is off.
            self._progress.mark(chain_id, "paused", self._monotonic(), "fill index paused")
            return 0
        head = int(await self._chain.rpc("eth_blockNumber"), 16)
        if head < self.next_block:
            self._progress.mark(chain_id, "current", self._monotonic())
            self.last_scan_at = self._monotonic()
            return 0
        logs = await self._logs(self.next_block, head, [FILL_TOPIC])
        block_times: dict[str, float] = {}
        for entry in logs:
            block_time = await self._block_time(entry["blockNumber"], block_times)
            if self.epoch != epoch:
                return 0
            await self._on_fill(decode_fill(chain_id, entry, block_time))
        if self.epoch != epoch:
            return 0
        self.next_block = head + 1
        self._progress.mark(chain_id, "current", self._monotonic())
        self.last_scan_at = self._monotonic()
        return len(logs)

    def _mark_unreachable(self, detail: str) -> None:
        self._progress.mark(self._chain.chain_id, "unreachable", self._monotonic(), detail)

    async def run(self) -> None:
        while True:
            try:
                await self.poll_once()
            except ChainUnavailable as exc:
                log.debug("indexer chain %s: %s", self._chain.chain_id, exc)
                self._mark_unreachable(f"chain unreachable: {exc}")
            except Exception as exc:  # a malformed answer must not end the index for good
                log.exception("indexer chain %s failed; retrying", self._chain.chain_id)
                self._mark_unreachable(f"fill index failed: {exc}")
            await asyncio.sleep(POLL_INTERVAL_S)


class IndexCatchUp:
    """`catch_up(chain_id)` over the running indexers (the app's `FILL_INDEXERS`, filled while
    the chains run): for a reader that must see every fill mined so far (the v1 book); and
    `replay`, for the records taken over from another instance."""

    def __init__(self, indexers: dict[int, FillIndexer]) -> None:
        self._indexers = indexers  # by chain id; shared with the wiring, which fills it

    async def catch_up(self, chain_id: int) -> None:
        indexer = self._indexers.get(chain_id)
        if indexer is not None:
            await indexer.catch_up()

    async def replay(
        self, chain_id: int, order_hashes: Sequence[bytes], since: float, to: FillSubscriber
    ) -> int:
        """`FillIndexer.replay` on the chain's indexer (none running: nothing to replay)."""
        indexer = self._indexers.get(chain_id)
        return 0 if indexer is None else await indexer.replay(order_hashes, since, to)


class IndexerSaved(StateSchema):
    """Where a chain's fill index stands: the first block not yet scanned."""

    next_block: int
