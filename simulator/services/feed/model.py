"""The rates feed's data: markets (one published pair, served by a corridor on one or more
chains), trades (one filled order, seen from the taker's side) and tickers, plus the exact
decimal arithmetic they are published with. Plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import Literal

from simulator.services.shared.venue import VenueCorridor, VenueToken
from simulator.settings import CorridorMode

FillKey = tuple[int, str, int]  # (chain id, tx hash, log index): one fill on the tape
Side = Literal["buy", "sell"]  # buy: the taker bought the base; sell: the taker sold it
Quote = Literal["bid", "ask"]  # bid: the rate for selling the base; ask: for buying it

# Amounts reach 78 digits (uint256) and decimals 36: exact arithmetic needs a wide context.
EXACT = Context(prec=160)
PRICE_PLACES = Decimal(1).scaleb(-18)  # prices are published to 18 decimal places
ZERO = Decimal(0)


def units(amount: int, decimals: int) -> Decimal:
    """`amount` atomic units as whole tokens, exactly."""
    return Decimal(amount).scaleb(-decimals, context=EXACT)


def price_of(target: Decimal, base: Decimal) -> Decimal:
    """Target per base, rounded half-even to 18 decimal places; 0 when there is no base."""
    if not base:
        return ZERO
    return EXACT.divide(target, base).quantize(PRICE_PLACES, ROUND_HALF_EVEN, context=EXACT)


def decimal_string(value: Decimal) -> str:
    """The feed's number format: plain decimal notation, no exponent, no trailing zeros."""
    if not value:
        return "0"
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


@dataclass(frozen=True)
class MarketLeg:
    """One chain's corridor serving a market, oriented as the market: `base` is what the
    market's base symbol is on that chain."""

    chain_id: int
    corridor: VenueCorridor
    base: VenueToken
    target: VenueToken
    size_token: VenueToken  # the side whose reference_size units the bid/ask trade is sized in

    @property
    def mode(self) -> CorridorMode:
        return self.corridor.timing.mode


@dataclass(frozen=True)
class PublishedMarket:
    """One published pair: `BASE_TARGET` in its natural direction, across every chain that
    deploys a corridor for it (decisions: one ticker per pair across chains)."""

    ticker_id: str
    base: str  # published symbol
    target: str  # published symbol
    legs: tuple[MarketLeg, ...]

    def leg(self, chain_id: int) -> MarketLeg | None:
        return next((leg for leg in self.legs if leg.chain_id == chain_id), None)


@dataclass(frozen=True)
class TradeRecord:
    """One filled order as the feed publishes it, from the taker's side, fee included (the
    amounts that left and reached the taker's wallet, as bid and ask are net of fees)."""

    trade_id: str  # "<txHash>-<logIndex>"
    ticker_id: str
    side: Side
    timestamp: int  # Unix seconds: the block's timestamp
    order: tuple[int, int, int, int]  # (timestamp, chain id, block, log index): tape order
    base_volume: Decimal  # whole base tokens
    target_volume: Decimal  # whole target tokens
    price: Decimal  # target per base, 18 places


@dataclass(frozen=True)
class TickerFigures:
    market: PublishedMarket
    last_price: Decimal
    bid: Decimal
    ask: Decimal
    high: Decimal
    low: Decimal
    base_volume: Decimal
    target_volume: Decimal


@dataclass(frozen=True)
class TradeQuery:
    side: Side | None  # None: both sides
    limit: int  # per side, already clamped to 1..MAX_LIMIT
    start_time: int | None  # inclusive Unix seconds
    end_time: int | None  # inclusive Unix seconds


@dataclass(frozen=True)
class TradePage:
    """Newest first on each side; every trade of each second at or after the page's cutoff."""

    buy: list[TradeRecord]
    sell: list[TradeRecord]
