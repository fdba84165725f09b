"""The DependencyProbe of the health model (services/shared/health.py), used by the chain
supervisor and /v1/status: reads each chain's head over JSON-RPC (so the `chain_unreachable`
fault switch and a dead node look alike) and the fill indexers' progress."""

from __future__ import annotations

import asyncio
import time

from rfqkit.chain import AnvilChain, ChainUnavailable
from simulator.adapters.rfq.indexer import FillIndexer
from simulator.services.shared.faults import Faults
from simulator.services.shared.health import ProbeResult

CHAIN_TIMEOUT_S = 2.0  # a status read must answer even when a node hangs
# The indexer polls every 50 ms: a scan older than this means it is not following the chain.
STALE_AFTER_S = 2.0


class ChainDependencyProbe:
    def __init__(
        self,
        chains: dict[int, AnvilChain],
        indexers: dict[int, FillIndexer],
        faults: Faults,
        *,
        chain_timeout_s: float = CHAIN_TIMEOUT_S,
        stale_after_s: float = STALE_AFTER_S,
    ) -> None:
        self._chains = chains  # filled at start-up by the chains' context
        self._indexers = indexers  # filled when the fill indexers start
        self._faults = faults
        self._chain_timeout_s = chain_timeout_s
        self._stale_after_s = stale_after_s

    async def chain(self, chain_id: int) -> ProbeResult:
        chain = self._chains.get(chain_id)
        if chain is None:
            return ProbeResult(up=False, reason="not_started")
        try:
            async with asyncio.timeout(self._chain_timeout_s):
                head = await chain.rpc("eth_blockNumber")
            return ProbeResult(up=True, block=int(head, 16))
        except ChainUnavailable as exc:
            return ProbeResult(up=False, reason="unreachable", detail=str(exc))
        except TimeoutError:
            return ProbeResult(up=False, reason="unreachable", detail="probe timed out")
        except (TypeError, ValueError) as exc:
            return ProbeResult(up=False, reason="unreachable", detail=f"bad head: {exc}")

    def fill_index(self, chain_id: int) -> ProbeResult:
        indexer = self._indexers.get(chain_id)
        if indexer is None:
            return ProbeResult(up=False, reason="not_running")
        scanned = indexer.next_block - 1 if indexer.next_block > 0 else None
        if chain_id in self._faults.indexer_paused:
            return ProbeResult(up=False, reason="paused", block=scanned)
        last = indexer.last_scan_at if indexer.last_scan_at is not None else indexer.started_at
        if time.monotonic() - last > self._stale_after_s:
            return ProbeResult(up=False, reason="stalled", block=scanned)
        return ProbeResult(up=True, block=scanned)
