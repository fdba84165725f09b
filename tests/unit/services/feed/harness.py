"""A feed service over fakes: a venue of two chains with tokens of 18 and 6 decimals, a clock
that moves only when told, prices and reservations set by the test behind the feed's port (one
fake for the RFQ corridors, one for the BOOK corridors), and fills built by hand (what the
indexer would decode from Fill logs)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from decimal import Decimal

from simulator.clock import Clock
from simulator.runtime.feed import build_feed
from simulator.services.feed.model import Side, TradePage
from simulator.services.feed.ports import Clearing, SideTrade
from simulator.services.shared.fills import Fill, FillFanout, IndexProgress
from simulator.services.shared.venue import (
    ChainVenue,
    VenueContracts,
    VenueCorridor,
    VenueDirectory,
    VenueToken,
)
from simulator.settings import CorridorTiming, FeedSettings, load_settings

T0 = 1_800_000_000.0  # simulator time at the start of every test


def address(n: int) -> str:
    return "0x" + f"{n:040x}"


USDT = VenueToken("USDT", "Tether USD", address(0xA1), 18, True)
USDC = VenueToken("USDC", "USD Coin", address(0xA2), 6, False)
NGNS = VenueToken("NGNS", "Naira Stable", address(0xA3), 6, False)
WBNB = VenueToken("WBNB", "Wrapped BNB", address(0xA4), 18, False)
OTHER = VenueToken("ZZZ", "Not in a corridor", address(0xA5), 18, False)
RFQ = CorridorTiming()
BOOK = CorridorTiming(mode="BOOK")


def chain_venue(chain_id: int) -> ChainVenue:
    return ChainVenue(
        chain_id=chain_id,
        environment="live" if chain_id == 56 else "test",
        name=f"chain-{chain_id}",
        rpc_url="http://127.0.0.1:1",
        managed=True,
        min_size=Decimal(1),
        contracts=VenueContracts(address(1), address(2), address(3), address(4), address(5)),
        tokens=(USDT, USDC, NGNS, WBNB, OTHER),
        corridors=(
            VenueCorridor(USDT, NGNS, RFQ),
            VenueCorridor(USDC, USDT, RFQ),
            VenueCorridor(WBNB, USDT, RFQ),
            VenueCorridor(USDC, NGNS, BOOK),
        ),
    )


class StoppedClock(Clock):
    """Simulator time that moves only through `advance`-like assignments; monotonic time too."""

    def __init__(self) -> None:
        super().__init__()
        self.at = T0
        self.mono = 100.0

    def time(self) -> float:
        return self.at

    def monotonic(self) -> float:
        return self.mono


@dataclass
class FakePrices:
    """Clearings and reservations by (chain, taker sells, taker buys), set by the test."""

    clearings: dict[tuple[int, str, str], Clearing] = field(default_factory=dict)
    reserved: dict[tuple[int, str, str], float] = field(default_factory=dict)
    asked: list[SideTrade] = field(default_factory=list)  # every trade priced, in order

    @staticmethod
    def key(trade: SideTrade) -> tuple[int, str, str]:
        return (trade.leg.chain_id, trade.sell.symbol, trade.buy.symbol)

    async def clearing(self, trade: SideTrade) -> Clearing | None:
        self.asked.append(trade)
        return self.clearings.get(self.key(trade))

    async def reserved_since(self, trade: SideTrade) -> float | None:
        return self.reserved.get(self.key(trade))


class Harness:
    def __init__(self, venue_chains: tuple[int, ...] = (56, 97), **feed: object) -> None:
        """`feed`: FeedSettings fields (chains, published_symbols, cache_s, ...)."""
        self.clock = StoppedClock()
        chains = venue_chains
        self.venue = VenueDirectory({c: chain_venue(c) for c in chains})
        self.prices = FakePrices()  # RFQ corridors
        self.book = FakePrices()  # BOOK corridors
        self.index = IndexProgress()
        for chain_id in chains:
            self.index.mark(chain_id, "current", self.clock.mono)
        self.settings = FeedSettings.model_validate(feed)
        self.fills = FillFanout()
        area = build_feed(
            load_settings(environ={}).model_copy(update={"feed": self.settings}),
            self.clock,
            self.venue,
            prices={"RFQ": self.prices, "BOOK": self.book},
            fills=self.fills,
            index=self.index,
        )
        self.area = area
        self.feed = area.service
        self.store = self.feed.store
        self._log_index = itertools.count()
        self._block = itertools.count(1)

    def fill(
        self,
        *,
        gave: VenueToken,
        gave_amount: int,
        got: VenueToken,
        got_amount: int,
        fee: int = 0,
        at: float | None = None,
        chain_id: int = 97,
        tx_hash: str | None = None,
        log_index: int | None = None,
        block: int | None = None,
    ) -> Fill:
        """A fill in which the maker gave `gave_amount` of `gave` (the taker received it) and
        received `got_amount` of `got` (the taker paid it plus `fee` in the same token)."""
        index = next(self._log_index) if log_index is None else log_index
        return Fill(
            chain_id=chain_id,
            tx_hash=tx_hash or "0x" + f"{index:064x}",
            log_index=index,
            block_time=self.clock.at if at is None else at,
            order_hash=bytes(32),
            maker=address(0xBEEF),
            taker=address(0xCAFE),
            input_token=gave.address,
            input_amount=gave_amount,
            output_token=got.address,
            output_amount=got_amount,
            fee_amount=fee,
            block_number=next(self._block) if block is None else block,
        )

    async def add(self, fill: Fill) -> Fill:
        await self.feed.on_fill(fill)
        return fill

    def trades(
        self,
        ticker_id: str = "USDT_NGN",
        *,
        side: Side | None = None,
        limit: int | None = None,
        start_time: int | None = None,
        end_time: int | None = None,
    ) -> TradePage:
        return self.feed.historical_trades(
            ticker_id=ticker_id,
            base=None,
            target=None,
            side=side,
            limit=limit,
            start_time=start_time,
            end_time=end_time,
        )
