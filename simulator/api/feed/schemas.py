"""Schemas of the public rates feed (spec 3 "Rates feed"): the query strings it parses and the
bodies it renders, which are top-level arrays and objects (no `data` wrapper), numbers as
decimal strings and trade timestamps as Unix seconds (decisions "Rates feed")."""

from __future__ import annotations

import decimal
from typing import Annotated, Literal

from pydantic import AliasPath, BaseModel, BeforeValidator, ConfigDict, Field, RootModel

from simulator.services.feed.model import decimal_string

SYMBOL_PATTERN = r"^[A-Z0-9]{1,24}$"
TICKER_ID_PATTERN = r"^[A-Z0-9]{1,24}_[A-Z0-9]{1,24}$"
# Exactly how the feed writes numbers: plain decimal notation, no exponent, no trailing zeros.
DECIMAL_PATTERN = r"^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$"


def _feed_number(value: object) -> object:
    return decimal_string(value) if isinstance(value, decimal.Decimal) else value


# A service's Decimal, written as the feed writes numbers (services/feed/model.py).
Decimal = Annotated[str, Field(pattern=DECIMAL_PATTERN), BeforeValidator(_feed_number)]
Symbol = Annotated[str, Field(pattern=SYMBOL_PATTERN, description="Published symbol")]
TickerId = Annotated[str, Field(pattern=TICKER_ID_PATTERN, description="BASE_TARGET")]


class FeedModel(BaseModel):
    # Rendered from the feed service's markets, tickers and trades (from_attributes).
    model_config = ConfigDict(extra="forbid", populate_by_name=True, from_attributes=True)


class FeedQuery(BaseModel):
    # Unknown query parameters (a cache buster, a tracker's own tag) are ignored, not refused.
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class TickersQuery(FeedQuery):
    ticker_id: TickerId | None = Field(
        default=None, description="One pair, `BASE_TARGET` (unknown: 404; malformed: 400)"
    )
    base: Symbol | None = Field(default=None, description="Only pairs with this base")
    target: Symbol | None = Field(default=None, description="Only pairs with this target")


class HistoricalTradesQuery(TickersQuery):
    ticker_id: TickerId | None = Field(
        default=None, description="The pair, `BASE_TARGET`; or give base and target"
    )
    trade_type: Literal["buy", "sell"] | None = Field(
        default=None,
        alias="type",
        description="Only this side; the other key is then an empty array",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="Trades per side, default 200, at most 1000 (higher is clamped); a page "
        "never splits a second, so it may hold more",
    )
    start_time: int | None = Field(
        default=None, ge=0, description="Oldest trade_timestamp to include (Unix seconds)"
    )
    end_time: int | None = Field(
        default=None, ge=0, description="Newest trade_timestamp to include (Unix seconds)"
    )


class Pair(FeedModel):
    ticker_id: str = Field(description="BASE_TARGET")
    base: str
    target: str


class Pairs(RootModel[list[Pair]]):
    pass


class Ticker(FeedModel):
    ticker_id: str = Field(validation_alias=AliasPath("market", "ticker_id"))
    base_currency: str = Field(validation_alias=AliasPath("market", "base"))
    target_currency: str = Field(validation_alias=AliasPath("market", "target"))
    last_price: Decimal = Field(description="Target per base: the newest price of the last 24 h")
    bid: Decimal = Field(description="Selling about 100 stable units of it, net of fees; 0: none")
    ask: Decimal = Field(description="Buying about 100 stable units of it, net of fees; 0: none")
    high: Decimal
    low: Decimal
    base_volume: Decimal = Field(description="Base traded in the last 24 h")
    target_volume: Decimal = Field(description="Target traded in the last 24 h")


class Tickers(RootModel[list[Ticker]]):
    pass


class Trade(FeedModel):
    trade_id: str = Field(description="<txHash>-<logIndex>: stable, unique, a dedupe key")
    price: Decimal = Field(description="Target per base this fill cleared at, fee included")
    base_volume: Decimal
    target_volume: Decimal
    trade_timestamp: int = Field(
        validation_alias="timestamp", description="Unix seconds (not milliseconds)"
    )
    type: Literal["buy", "sell"] = Field(
        validation_alias="side", description="buy: the base was bought"
    )


class HistoricalTrades(FeedModel):
    buy: list[Trade] = Field(description="Newest first")
    sell: list[Trade] = Field(description="Newest first")
