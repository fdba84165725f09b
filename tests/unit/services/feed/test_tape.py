"""The tape: every fill the indexers hand over is stored once per (chain, tx hash, log index),
whoever filled it; re-indexing from an earlier block adds nothing; a transaction that fills
several orders gives several trades; fills of pairs no corridor serves stay off the feed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from eth_abi.abi import encode

from simulator.adapters.rfq.indexer import FILL_TOPIC, FillIndexer
from simulator.services.shared.faults import Faults
from simulator.services.shared.fills import Fill, FillFanout, IndexProgress
from tests.unit.services.feed.harness import NGNS, OTHER, USDT, Harness, address


async def test_the_same_fill_twice_is_one_trade() -> None:
    h = Harness()
    fill = h.fill(gave=NGNS, gave_amount=16_000 * 10**6, got=USDT, got_amount=10 * 10**18)
    await h.add(fill)
    await h.add(fill)
    page = h.trades()
    assert [t.trade_id for t in page.sell] == [fill.trade_id]
    assert len(h.store.fills) == 1


async def test_one_transaction_with_several_orders_is_several_trades() -> None:
    h = Harness()
    tx = "0x" + "ab" * 32
    for index in (3, 5, 7):
        fill = h.fill(gave=USDT, gave_amount=10**18, got=NGNS, got_amount=1600 * 10**6, tx_hash=tx)
        await h.add(replace(fill, log_index=index, block_number=9))
    page = h.trades(side="buy")
    assert [t.trade_id for t in page.buy] == [f"{tx}-7", f"{tx}-5", f"{tx}-3"]
    assert page.sell == []


async def test_a_fill_of_a_pair_without_corridor_is_kept_but_not_published() -> None:
    h = Harness()
    await h.add(h.fill(gave=OTHER, gave_amount=10**18, got=USDT, got_amount=10**18))
    assert h.store.unlisted == 1
    for market in h.feed.markets():
        assert h.store.tape(market.ticker_id).trades == []


async def test_the_same_transaction_on_two_chains_is_two_fills() -> None:
    h = Harness()
    tx = "0x" + "cd" * 32
    for chain_id in (56, 97):
        fill = h.fill(gave=USDT, gave_amount=10**18, got=NGNS, got_amount=1600 * 10**6)
        await h.add(replace(fill, tx_hash=tx, log_index=0, chain_id=chain_id))
    assert len(h.store.fills) == 2
    assert len(h.store.tape("USDT_NGN").trades) == 2


class FakeChain:
    """Enough JSON-RPC for the indexer: a head, the reactor's Fill logs, block timestamps."""

    chain_id = 97

    def __init__(self) -> None:
        self.logs: list[dict[str, Any]] = []
        self.head = 0
        self.times: dict[int, int] = {}

    def add_fill(self, block: int, log_index: int, tx_hash: str, when: int) -> None:
        data = encode(
            ["address", "uint256", "address", "uint256", "uint256"],
            [NGNS.address, 1600 * 10**6, USDT.address, 10**18, 5 * 10**14],
        )
        self.logs.append(
            {
                "topics": [
                    FILL_TOPIC,
                    "0x" + "11" * 32,
                    "0x" + address(0xBEEF)[2:].rjust(64, "0"),
                    "0x" + address(0xCAFE)[2:].rjust(64, "0"),
                ],
                "data": "0x" + data.hex(),
                "transactionHash": tx_hash,
                "logIndex": hex(log_index),
                "blockNumber": hex(block),
            }
        )
        self.head = max(self.head, block)
        self.times[block] = when

    async def rpc(self, method: str, params: list[Any] | None = None) -> Any:
        if method == "eth_blockNumber":
            return hex(self.head)
        if method == "eth_getLogs":
            low = int(params[0]["fromBlock"], 16)  # type: ignore[index]
            high = int(params[0]["toBlock"], 16)  # type: ignore[index]
            return [e for e in self.logs if low <= int(e["blockNumber"], 16) <= high]
        if method == "eth_getBlockByNumber":
            return {"timestamp": hex(self.times[int(params[0], 16)])}  # type: ignore[index]
        raise AssertionError(method)


async def test_reindexing_from_block_zero_adds_no_duplicate() -> None:
    h = Harness(venue_chains=(97,))
    chain = FakeChain()
    seen: list[Fill] = []

    async def settlement(fill: Fill) -> None:
        seen.append(fill)

    fanout = FillFanout([settlement, h.feed.on_fill])
    progress = IndexProgress()
    indexer = FillIndexer(chain, address(2), fanout, Faults(), progress)  # type: ignore[arg-type]
    tx = "0x" + "ef" * 32
    chain.add_fill(4, 0, tx, int(h.clock.at))
    chain.add_fill(4, 1, tx, int(h.clock.at))
    assert await indexer.poll_once() == 2
    assert progress.chains[97].state == "current"
    indexer.next_block = 0  # a restart, or an index rebuilt from scratch
    assert await indexer.poll_once() == 2
    assert len(seen) == 4, "every subscriber is handed every log again"
    trades = h.store.tape("USDT_NGN").trades
    assert sorted(t.trade_id for t in trades) == [f"{tx}-0", f"{tx}-1"]
    assert all(t.side == "sell" for t in trades), "the maker gave NGNS: the taker sold USDT"


async def test_a_failing_subscriber_does_not_keep_the_fill_from_the_others() -> None:
    h = Harness()

    async def broken(fill: Fill) -> None:
        raise RuntimeError("boom")

    fanout = FillFanout([broken, h.feed.on_fill])
    await fanout(h.fill(gave=NGNS, gave_amount=1600 * 10**6, got=USDT, got_amount=10**18))
    assert len(h.store.fills) == 1


async def test_a_paused_index_reports_itself_and_hands_nothing() -> None:
    chain = FakeChain()
    chain.add_fill(1, 0, "0x" + "01" * 32, 1)
    faults = Faults(indexer_paused={97})
    progress = IndexProgress()

    async def sink(fill: Fill) -> None:
        raise AssertionError("nothing is handed over while paused")

    indexer = FillIndexer(chain, address(2), sink, faults, progress)  # type: ignore[arg-type]
    assert await indexer.poll_once() == 0
    assert progress.chains[97].state == "paused"
