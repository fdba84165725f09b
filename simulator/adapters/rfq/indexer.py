"""The fill indexer: follows each chain's reactor `Fill` logs and hands every fill to its
subscribers (RFQ settlement, the v1 book, v1 swaps), whether or not the taker reported its
transaction. `catch_up` scans up to the head on demand, for a read that must not wait for the
next poll."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from eth_abi.abi import decode
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from rfqkit.chain import AnvilChain, ChainUnavailable
from simulator.services.rfq.settlement import Fill
from simulator.services.shared.faults import Faults

log = logging.getLogger("rfqsim.indexer")

FILL_TOPIC = (
    "0x"
    + keccak(text="Fill(bytes32,address,address,address,uint256,address,uint256,uint256)").hex()
)
POLL_INTERVAL_S = 0.05  # Anvil mines on demand; polling this often keeps reconciliation fast


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
    )


class FillIndexer:
    def __init__(
        self,
        chain: AnvilChain,
        reactor: str,
        on_fill: Callable[[Fill], Awaitable[None]],
        faults: Faults | None = None,
    ) -> None:
        self._chain = chain
        self._faults = faults or Faults()  # /_sim/faults indexer_paused holds the index back
        self._reactor = reactor
        self._on_fill = on_fill
        self.next_block = 0  # first block not yet scanned
        self._scan_lock = asyncio.Lock()  # one scan at a time: a fill is handed on exactly once

    async def catch_up(self) -> None:
        """Scan up to the head now (the background poll and this never overlap)."""
        await self.poll_once()

    async def poll_once(self) -> int:
        """Scan new blocks; returns how many fills were handed on."""
        async with self._scan_lock:
            return await self._scan()

    async def _scan(self) -> int:
        if self._chain.chain_id in self._faults.indexer_paused:
            return 0  # nothing is lost: scanning resumes from next_block when the switch is off
        head = int(await self._chain.rpc("eth_blockNumber"), 16)
        if head < self.next_block:
            return 0
        logs = await self._chain.rpc(
            "eth_getLogs",
            [
                {
                    "address": self._reactor,
                    "topics": [FILL_TOPIC],
                    "fromBlock": hex(self.next_block),
                    "toBlock": hex(head),
                }
            ],
        )
        block_times: dict[str, float] = {}
        for entry in logs:
            block = entry["blockNumber"]
            if block not in block_times:
                header = await self._chain.rpc("eth_getBlockByNumber", [block, False])
                block_times[block] = float(int(header["timestamp"], 16))
            await self._on_fill(decode_fill(self._chain.chain_id, entry, block_times[block]))
        self.next_block = head + 1
        return len(logs)

    async def run(self) -> None:
        while True:
            try:
                await self.poll_once()
            except ChainUnavailable as exc:
                log.debug("indexer chain %s: %s", self._chain.chain_id, exc)
            await asyncio.sleep(POLL_INTERVAL_S)


class FillIndexes:
    """Every chain's indexer (filled at start-up) and the subscribers each hands fills to, in
    order. A failing subscriber is logged and does not keep the fill from the others."""

    def __init__(self) -> None:
        self.indexers: dict[int, FillIndexer] = {}  # by chain id, while the chains run
        self.subscribers: list[Callable[[Fill], Awaitable[None]]] = []  # RFQ first, then v1

    async def deliver(self, fill: Fill) -> None:
        for subscriber in self.subscribers:
            try:
                await subscriber(fill)
            except Exception:
                log.exception("fill %s: a subscriber failed", fill.trade_id)

    async def catch_up(self, chain_id: int) -> None:
        indexer = self.indexers.get(chain_id)
        if indexer is not None:
            await indexer.catch_up()
