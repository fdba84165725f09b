"""The v1 status's probe (adapters/chain/probes.py) against a fake chain client and fill indexer:
the chain's head, an unreachable or hanging node, a paused, stalled or missing index."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rfqkit.chain import ChainUnavailable
from simulator.adapters.chain.probes import ChainDependencyProbe
from simulator.services.shared.faults import Faults
from simulator.services.shared.health import ProbeResult


class FakeChain:
    def __init__(self, answer: Any = "0x2a", *, hang: bool = False) -> None:
        self.answer = answer
        self.hang = hang

    async def rpc(self, method: str, params: list[Any] | None = None) -> Any:
        assert method == "eth_blockNumber"
        if self.hang:
            await asyncio.sleep(10)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class FakeIndexer:
    def __init__(self, next_block: int, last_scan_at: float | None) -> None:
        self.next_block = next_block
        self.started_at = time.monotonic()
        self.last_scan_at = last_scan_at


def probe(chains: dict[int, Any], indexers: dict[int, Any], faults: Faults) -> ChainDependencyProbe:
    return ChainDependencyProbe(chains, indexers, faults, chain_timeout_s=0.05, stale_after_s=1.0)


async def test_chain_head_unreachable_hanging_and_not_started() -> None:
    faults = Faults()
    chains = {
        56: FakeChain("0x2a"),
        97: FakeChain(ChainUnavailable("chain 97 RPC unreachable (fault switch)")),
        1: FakeChain(hang=True),
    }
    checks = probe(chains, {}, faults)
    assert await checks.chain(56) == ProbeResult(up=True, block=42)
    assert await checks.chain(97) == ProbeResult(up=False, reason="unreachable")
    assert await checks.chain(1) == ProbeResult(up=False, reason="unreachable")
    assert await checks.chain(2) == ProbeResult(up=False, reason="not_started")


def test_fill_index_states() -> None:
    faults = Faults()
    now = time.monotonic()
    indexers = {56: FakeIndexer(11, now), 97: FakeIndexer(5, now - 5)}
    checks = probe({}, indexers, faults)
    assert checks.fill_index(56) == ProbeResult(up=True, block=10)
    assert checks.fill_index(97) == ProbeResult(up=False, reason="stalled", block=4)
    assert checks.fill_index(1) == ProbeResult(up=False, reason="not_running")
    faults.update(indexer_paused=[56])
    assert checks.fill_index(56) == ProbeResult(up=False, reason="paused", block=10)
    # Before its first scan an indexer counts from its start.
    assert probe({}, {3: FakeIndexer(0, None)}, faults).fill_index(3) == ProbeResult(up=True)


class CancellingChain:
    """Answers at once, and cancels `task` as it answers: the cancel and the answer meet."""

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None

    async def rpc(self, method: str, params: list[Any] | None = None) -> Any:
        assert self.task is not None
        self.task.cancel()
        return "0x2a"


async def test_a_cancel_that_meets_the_answer_stops_the_loop_that_probes() -> None:
    """The chain supervisor probes in a loop; a stop cancels it. A cancel that arrived as the
    node answered was once lost (asyncio.wait_for on Python 3.11), and the stop waited for a
    loop that went on probing."""
    chain = CancellingChain()
    prober = probe({56: chain}, {}, Faults())

    async def loop() -> str:
        for _ in range(3):
            await prober.chain(56)
            await asyncio.sleep(0)
        return "went on probing after the cancel"

    chain.task = asyncio.create_task(loop())
    try:
        outcome = await chain.task
    except asyncio.CancelledError:
        outcome = "stopped"
    assert outcome == "stopped"
