"""The public rates feed (spec 3 "Rates feed"): the published pairs, their tickers and their
trade history, built from the tape of reactor fills and the venue's live prices.

- Markets: every deployed corridor of every published chain, in its natural direction (the
  corridor's configured base/quote), symbols as published (NGNS as NGN); the same pair on two
  chains is one market whose legs are both corridors (decisions "Rates feed").
- Trades: one per reactor Fill, whoever filled it and whether or not we ever quoted the order,
  seen from the taker: `buy` when the taker received the base; amounts include the fee the
  taker paid, so prices are comparable with bid and ask, which are net of fees.
- bid/ask: the best, across the market's chains, of what a trade of `reference_size` units of
  the stable side clears at now (RFQ corridors: exactly the preview without steering; BOOK
  corridors: the book's matcher over its resting offers). A side at 0 that a live firm quote
  reserves shows the newest cleared price instead, for at most `reserved_fallback_s`.
- Everything that is "now" or "the last 24 h" is the simulator clock, so advancing it ages
  trades out of the window."""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal

from simulator.clock import Clock
from simulator.errors import InvalidRequest, NotFound, UpstreamError
from simulator.services.feed.model import (
    EXACT,
    ZERO,
    MarketLeg,
    PublishedMarket,
    Quote,
    Side,
    TickerFigures,
    TradePage,
    TradeQuery,
    TradeRecord,
    price_of,
    units,
)
from simulator.services.feed.paging import clamp_limit, page
from simulator.services.feed.ports import CorridorPrices, SideTrade
from simulator.services.feed.store import FeedStore
from simulator.services.shared.amounts import whole_tokens
from simulator.services.shared.fills import Fill, IndexProgress
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import CorridorMode, FeedSettings

TWO = EXACT.create_decimal(2)


class FeedService:
    def __init__(
        self,
        clock: Clock,
        settings: FeedSettings,
        venue: VenueDirectory,
        store: FeedStore,
        prices: Mapping[CorridorMode, CorridorPrices],
        index: IndexProgress,
    ) -> None:
        self._clock = clock
        self.settings = settings
        self._venue = venue
        self.store = store
        self._prices = prices  # by corridor mode: RFQ levels, the v1 book's resting offers
        self._index = index  # what the fill indexers report: is the tape complete up to now?
        self._built_for: tuple[int, ...] | None = None  # venue chains the markets were built for
        self._markets: dict[str, PublishedMarket] = {}  # by ticker id, in publishing order
        # (chain id, frozenset of both token addresses, lowercase) -> the market and its leg
        self._by_tokens: dict[tuple[int, frozenset[str]], tuple[PublishedMarket, MarketLeg]] = {}

    # --- markets -----------------------------------------------------------------------------

    def markets(self) -> list[PublishedMarket]:
        chains = tuple(self._venue.chains)
        if chains != self._built_for:
            self._build_markets()
            self._built_for = chains
        return list(self._markets.values())

    def _publish(self, symbol: str) -> str:
        return self.settings.published_symbols.get(symbol, symbol)

    def _build_markets(self) -> None:
        legs: dict[frozenset[str], list[MarketLeg]] = {}
        names: dict[frozenset[str], tuple[str, str]] = {}  # first orientation seen wins
        for chain in self._venue.chains.values():
            if self.settings.chains is not None and chain.chain_id not in self.settings.chains:
                continue
            for corridor in chain.corridors:
                base, target = (
                    self._publish(corridor.base.symbol),
                    self._publish(corridor.quote.symbol),
                )
                if base == target:
                    continue  # two tokens published under one symbol: no pair to show
                pair = frozenset((base, target))
                names.setdefault(pair, (base, target))
                base_token, target_token = corridor.base, corridor.quote
                if names[pair][0] != base:
                    base_token, target_token = target_token, base_token
                if base_token.symbol in self.settings.size_symbols:
                    size_token = base_token
                elif target_token.symbol in self.settings.size_symbols:
                    size_token = target_token
                else:
                    size_token = base_token
                legs.setdefault(pair, []).append(
                    MarketLeg(chain.chain_id, corridor, base_token, target_token, size_token)
                )
        self._markets = {}
        self._by_tokens = {}
        for pair, (base, target) in names.items():
            market = PublishedMarket(f"{base}_{target}", base, target, tuple(legs[pair]))
            self._markets[market.ticker_id] = market
            for leg in market.legs:
                tokens = frozenset((leg.base.address.lower(), leg.target.address.lower()))
                self._by_tokens[(leg.chain_id, tokens)] = (market, leg)

    def _published_chains(self) -> list[int]:
        return sorted({leg.chain_id for market in self.markets() for leg in market.legs})

    # --- the tape ----------------------------------------------------------------------------

    async def on_fill(self, fill: Fill) -> None:
        """The fill indexers' subscriber: each fill is recorded once, however often it is
        handed over (re-indexing from an earlier block hands the same logs again)."""
        if self.store.has(fill.key):
            return
        self.store.add(fill, self._trade(fill))

    def _trade(self, fill: Fill) -> TradeRecord | None:
        self.markets()
        tokens = frozenset((fill.input_token.lower(), fill.output_token.lower()))
        found = self._by_tokens.get((fill.chain_id, tokens))
        if found is None:
            return None  # a pair no published corridor serves: on the tape, not in the feed
        market, leg = found
        taker_paid = fill.output_amount + fill.fee_amount  # the fee is on top, in that token
        side: Side
        if fill.input_token.lower() == leg.base.address.lower():
            side, base_amount, target_amount = "buy", fill.input_amount, taker_paid
        else:
            side, base_amount, target_amount = "sell", taker_paid, fill.input_amount
        base_volume = units(base_amount, leg.base.decimals)
        target_volume = units(target_amount, leg.target.decimals)
        timestamp = int(fill.block_time)
        return TradeRecord(
            trade_id=fill.trade_id,
            ticker_id=market.ticker_id,
            side=side,
            timestamp=timestamp,
            order=(timestamp, fill.chain_id, fill.block_number, fill.log_index),
            base_volume=base_volume,
            target_volume=target_volume,
            price=price_of(target_volume, base_volume),
        )

    def forget(self) -> None:
        """The housekeeping sweep: seconds no ticker window reaches any more leave memory,
        fills older than `keep_trades_s` leave the tape (one DELETE in the history file)."""
        now = self._clock.time()
        self.store.forget(
            window_from=math.ceil(now - self.settings.window_s),
            tape_from=math.ceil(now - self.settings.keep_trades_s),
        )

    # --- reads -------------------------------------------------------------------------------

    def pairs(self) -> list[PublishedMarket]:
        return self.markets()

    async def tickers(
        self, *, ticker_id: str | None, base: str | None, target: str | None
    ) -> list[TickerFigures]:
        markets = self._select(ticker_id, base, target)
        self._require_index()
        now = self._clock.time()
        return [await self._ticker(market, now) for market in markets]

    def historical_trades(
        self,
        *,
        ticker_id: str | None,
        base: str | None,
        target: str | None,
        side: Side | None,
        limit: int | None,
        start_time: int | None,
        end_time: int | None,
    ) -> TradePage:
        if ticker_id is None and (base is None or target is None):
            raise InvalidRequest("ticker_id, or base and target together, is required")
        (market,) = self._select(ticker_id, base, target)
        if start_time is not None and end_time is not None and start_time > end_time:
            raise InvalidRequest(f"start_time {start_time} is after end_time {end_time}")
        self._require_index()
        query = TradeQuery(side, clamp_limit(limit), start_time, end_time)
        trades = self.store.archive.newest_first(
            market.ticker_id, query.side, query.start_time, query.end_time
        )
        return page(trades, query.limit)

    def _select(
        self, ticker_id: str | None, base: str | None, target: str | None
    ) -> list[PublishedMarket]:
        markets = self.markets()
        if ticker_id is not None:
            market = self._markets.get(ticker_id)
            if market is None:
                raise NotFound(f"Unknown ticker_id {ticker_id}")
            if (base is not None and base != market.base) or (
                target is not None and target != market.target
            ):
                raise InvalidRequest(f"base and target do not match ticker_id {ticker_id}")
            return [market]
        chosen = [
            m
            for m in markets
            if (base is None or m.base == base) and (target is None or m.target == target)
        ]
        if not chosen and (base is not None or target is not None):
            pair = f"{base or '*'}_{target or '*'}"
            raise NotFound(f"No pair {pair}")
        return chosen

    def _require_index(self) -> None:
        """502 unless every published chain's fill index reached its head recently: a feed
        built from a stale tape would publish wrong trades and volumes."""
        now = self._clock.monotonic()
        for chain_id in self._published_chains():
            entry = self._index.chains.get(chain_id)
            if entry is None or entry.state == "starting" or entry.last_current is None:
                problem = "not ready yet"
            elif entry.state != "current":
                problem = entry.detail or entry.state
            elif now - entry.last_current > self.settings.index_max_lag_s:
                problem = f"behind its chain for {now - entry.last_current:.1f} s"
            else:
                continue
            raise UpstreamError(
                f"The feed cannot be built: fill index of chain {chain_id}: {problem}",
                details={"reason": "fill_index_unavailable", "chainId": chain_id},
            )

    # --- tickers -----------------------------------------------------------------------------

    async def _ticker(self, market: PublishedMarket, now: float) -> TickerFigures:
        bid = await self._side(market, "bid", now)
        ask = await self._side(market, "ask", now)
        # After the awaits: the window as it is now; its seconds, not its trades, are summed.
        window = self.store.window(market.ticker_id)
        seconds = window.since(math.ceil(now - self.settings.window_s))
        base_volume = target_volume = ZERO
        for second in seconds:
            base_volume = EXACT.add(base_volume, second.base_volume)
            target_volume = EXACT.add(target_volume, second.target_volume)
        if seconds:
            last = seconds[-1].last_price
            high = max(second.high for second in seconds)
            low = min(second.low for second in seconds)
        else:
            last = high = low = self._reference(bid, ask, window.newest)
        return TickerFigures(market, last, bid, ask, high, low, base_volume, target_volume)

    def _reference(self, bid: Decimal, ask: Decimal, newest: TradeRecord | None) -> Decimal:
        """No trade in the window: the better of bid/ask (the side that quotes; with both,
        their midpoint), else the market's last price at any age, else 0 (decisions)."""
        if bid and ask:
            return price_of(EXACT.add(bid, ask), TWO)
        if bid or ask:
            return bid or ask
        return newest.price if newest is not None else ZERO

    def _side_trade(self, leg: MarketLeg, quote: Quote) -> SideTrade:
        size = whole_tokens(self.settings.reference_size, leg.size_token.decimals)
        sized_on_base = leg.size_token == leg.base
        if quote == "bid":  # the taker sells the base
            sell_amount, buy_amount = (size, None) if sized_on_base else (None, size)
            return SideTrade(leg, leg.base, leg.target, sell_amount, buy_amount)
        sell_amount, buy_amount = (None, size) if sized_on_base else (size, None)
        return SideTrade(leg, leg.target, leg.base, sell_amount, buy_amount)

    async def _side(self, market: PublishedMarket, quote: Quote, now: float) -> Decimal:
        best = ZERO
        reserved: list[float] = []
        for leg in market.legs:
            trade = self._side_trade(leg, quote)
            prices = self._prices[leg.mode]
            clearing = await prices.clearing(trade)
            if clearing is None or not clearing.sold or not clearing.bought:
                since = await prices.reserved_since(trade)
                if since is not None:
                    reserved.append(since)
                continue
            base_amount, target_amount = (
                (clearing.sold, clearing.bought)
                if quote == "bid"
                else (clearing.bought, clearing.sold)
            )
            price = price_of(
                units(target_amount, leg.target.decimals), units(base_amount, leg.base.decimals)
            )
            # Best for the taker: the highest rate to sell the base at, the lowest to buy it.
            if not best or (price > best if quote == "bid" else price < best):
                best = price
        key = (market.ticker_id, quote)
        if best or not reserved:
            self.store.fallback_since.pop(key, None)
            return best
        # Nothing fillable, but a firm quote holds maker inventory on this side: the newest
        # cleared price, for at most reserved_fallback_s of continuous reservation.
        since = self.store.fallback_since.setdefault(key, min(reserved))
        newest = self.store.window(market.ticker_id).newest
        if newest is None or now - since > self.settings.reserved_fallback_s:
            return ZERO
        return newest.price
