"""A simulated maker's pricing: pure functions, exact integer/rational arithmetic, no I/O.

Model, for one direction (the taker sells `sell`, the maker gives `buy`), in whole tokens:

    price(s) = p * (1 - (spread_bps / 2 + impact_bps * (usd(s) / impact_reference_usd) ** e) / 1e4)
    curve(s) = s * price(s)

`p` is the reference mid in buy-per-sell (a mid "BASE/QUOTE: m" is m QUOTE per BASE, so selling
QUOTE for BASE uses 1/m); half the spread is taken on each side of the mid; the depth curve adds
`impact_bps` at a trade worth `impact_reference_usd` (scaled by the exponent `e`: 1 linear,
2 convex), up to `max_impact_bps`, where the curve ends. `usd(s)` values the taker's sell amount
through the mids against a USD token (USDT, USDC); a token with no such route counts its whole
units as dollars.

Firm prices are not the smooth curve but its chords: the curve is sampled at the fixed sell
sizes `2**k` whole tokens (k of either sign), rounded down to atomic units, and interpolated
linearly with integers in the maker's favour. The published levels are the last nine of those
breakpoints below the depth plus the depth itself, so a firm price for a size inside the
levels is exactly the rounded-down interpolation of the levels (never better for the taker),
and never worse than the curve one grid step further out (at most twice the size).

The depth is where the maker would give all it is willing to show: `max_inventory_fraction`
of the inventory it is told it has (on-chain balance less live commitments, computed by the
caller).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from rfqkit.maker_protocol import MAX_LEVELS

BPS = 10_000
DEFAULT_USD_TOKENS = frozenset({"USDT", "USDC"})
DEFAULT_MIDS: dict[str, Fraction] = {
    "USDT/NGNS": Fraction(1600),
    "USDC/USDT": Fraction(1),
    "WBNB/USDT": Fraction(600),
    "USDC/NGNS": Fraction(1600),
}

Point = tuple[int, int]  # (sellAmount, buyAmount) in atomic units
LADDER_MEMO = 16  # ladders kept per curve (by inventory)


def to_fraction(value: int | str | Decimal | Fraction) -> Fraction:
    """Exact rational from a config value (a float would carry binary noise, so none here)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise TypeError("a price is not a boolean")
    return Fraction(value)


@dataclass(frozen=True)
class TokenSpec:
    """A token as pricing sees it: its symbol (the key of the mids) and its decimals."""

    symbol: str
    decimals: int


@dataclass(frozen=True)
class PricingParams:
    """Everything a maker's prices depend on. Mids are keyed "BASE/QUOTE" (QUOTE per BASE)."""

    mids: Mapping[str, Fraction]
    spread_bps: Fraction = Fraction(10)
    impact_bps: Fraction = Fraction(10)
    impact_reference_usd: Fraction = Fraction(1_000_000)
    impact_exponent: int = 1
    max_impact_bps: Fraction = Fraction(1000)
    max_inventory_fraction: Fraction = Fraction(1)
    usd_tokens: frozenset[str] = field(default=DEFAULT_USD_TOKENS)

    def __post_init__(self) -> None:
        if self.spread_bps < 0 or self.impact_bps < 0 or self.max_impact_bps < 0:
            raise ValueError("spread and impact must not be negative")
        if not 1 <= self.impact_exponent <= 4:
            raise ValueError("impact_exponent must be 1..4")
        if self.impact_reference_usd <= 0:
            raise ValueError("impact_reference_usd must be positive")
        if not 0 <= self.max_inventory_fraction <= 1:
            raise ValueError("max_inventory_fraction must lie in [0, 1]")
        # The curve must keep rising up to its end (marginal price > 0), so the levels
        # increase strictly: d/ds [s * (1 - h - k s^e)] = 1 - h - (e + 1) k s^e > 0.
        worst = self.spread_bps / 2 + (self.impact_exponent + 1) * self.max_impact_bps
        if worst >= BPS:
            raise ValueError("spread/2 + (exponent + 1) * max_impact_bps must stay below 10000")
        for pair, mid in self.mids.items():
            if mid <= 0 or pair.count("/") != 1:
                raise ValueError(f"mid {pair}: {mid} must be positive and keyed BASE/QUOTE")

    def mid(self, sell: str, buy: str) -> Fraction | None:
        """Whole `buy` tokens per whole `sell` token at the mid, or None if no mid covers it."""
        if sell == buy:
            return Fraction(1)
        direct = self.mids.get(f"{sell}/{buy}")
        if direct is not None:
            return direct
        inverse = self.mids.get(f"{buy}/{sell}")
        return None if inverse is None else 1 / inverse

    def usd_price(self, symbol: str) -> Fraction | None:
        """Dollars per whole token: 1 for a USD token, else through a mid against one."""
        if symbol in self.usd_tokens:
            return Fraction(1)
        for usd in sorted(self.usd_tokens):
            price = self.mid(symbol, usd)
            if price is not None:
                return price
        return None


@dataclass(frozen=True)
class PriceCurve:
    """One direction's curve (see the module docstring). Amounts are atomic units: `s` of the
    sell token (what the maker receives, before the fee), `b` of the buy token (it gives)."""

    sell_decimals: int
    buy_decimals: int
    price: Fraction  # whole buy per whole sell at the mid
    half_spread_bps: Fraction
    impact_bps: Fraction
    impact_reference_sell: Fraction  # whole sell tokens worth impact_reference_usd
    impact_exponent: int
    max_impact_bps: Fraction
    max_inventory_fraction: Fraction
    # Derived values computed once (the curve limit, the grid points so far); not a field
    # that takes part in equality or the constructor.
    _memo: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def _sell_unit(self) -> int:
        return int(10**self.sell_decimals)

    def impact_at(self, sell_amount: int) -> Fraction:
        """Extra bps of price impact for a taker selling `sell_amount`."""
        x = Fraction(sell_amount, self._sell_unit) / self.impact_reference_sell
        return self.impact_bps * x**self.impact_exponent

    def curve(self, sell_amount: int) -> int | None:
        """The smooth curve, rounded down; None beyond its end (impact above the maximum)."""
        impact = self.impact_at(sell_amount)
        if impact > self.max_impact_bps:
            return None
        whole = Fraction(sell_amount, self._sell_unit) * self.price
        given = whole * (BPS - self.half_spread_bps - impact) / BPS
        return math.floor(given * int(10**self.buy_decimals))

    def curve_limit(self) -> int | None:
        """The largest sell amount the curve covers (None: no limit, impact is zero)."""
        if "limit" not in self._memo:
            self._memo["limit"] = self._find_limit()
        limit: int | None = self._memo["limit"]
        return limit

    def _find_limit(self) -> int | None:
        if self.impact_bps == 0:
            return None
        # impact(s) <= max  <=>  s <= ref * (max / k) ** (1 / e) whole tokens; search the
        # integer boundary exactly rather than trusting a float root.
        low, high = 0, 1
        while self.impact_at(high) <= self.max_impact_bps:
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            if self.impact_at(middle) <= self.max_impact_bps:
                low = middle
            else:
                high = middle
        return low

    def breakpoints(self, give_cap: int) -> list[Point]:
        """The chord breakpoints (fixed sell sizes 2**k whole tokens, plus the curve's end),
        strictly increasing in both amounts, from the first size where the maker gives at least
        one atomic unit up to the first breakpoint giving more than `give_cap` (or the end).
        Computed once per curve and extended on demand."""
        limit = self.curve_limit()
        points: list[Point] = self._memo.setdefault("points", [])
        gives: list[int] = self._memo.setdefault("gives", [])  # points' buy amounts, to bisect
        sizes: Iterator[int] = self._memo.setdefault("sizes", _grid_sizes(self._sell_unit))
        while not self._memo.get("complete") and not (points and points[-1][1] > give_cap):
            candidate = next(sizes)
            size = candidate if limit is None else min(candidate, limit)
            given = self.curve(size)
            assert given is not None  # size <= limit
            if given > 0 and (not points or (size > points[-1][0] and given > points[-1][1])):
                points.append((size, given))
                gives.append(given)
            if size == limit:
                self._memo["complete"] = True
        end = bisect.bisect_right(gives, give_cap)
        return points[: end + 1]

    def give_cap(self, inventory: int) -> int:
        """What the maker is willing to give: its shown fraction of `inventory`, rounded down."""
        return math.floor(max(inventory, 0) * self.max_inventory_fraction)

    def ladder(self, inventory: int) -> list[Point]:
        """Every breakpoint below the depth, then the depth point (empty: nothing to give).
        The last few ladders are kept by inventory: an rfq prices, and levels are computed,
        against the same inventory several times."""
        ladders: dict[int, tuple[Point, ...]] = self._memo.setdefault("ladders", {})
        ladder = ladders.get(inventory)
        if ladder is None:
            if len(ladders) >= LADDER_MEMO:
                del ladders[next(iter(ladders))]  # the oldest
            ladder = ladders[inventory] = tuple(self._ladder(self.give_cap(inventory)))
        return list(ladder)

    def _ladder(self, cap: int) -> list[Point]:
        points = self.breakpoints(cap)
        below = [p for p in points if p[1] <= cap]
        if len(below) == len(points):  # the curve ends before the inventory does
            return below
        # The depth lies on the segment from the last point within the cap to the next one.
        previous = below[-1] if below else (0, 0)
        nxt = points[len(below)]
        depth = previous[0] + (cap - previous[1]) * (nxt[0] - previous[0]) // (nxt[1] - previous[1])
        given = _interpolate(previous, nxt, depth)
        if depth > previous[0] and given > previous[1]:
            below.append((depth, given))
        return below

    def levels(self, inventory: int) -> list[Point]:
        """Up to nine (sellAmount, buyAmount) points, strictly increasing, the last one being
        the depth: the `levels` message for this direction."""
        return self.ladder(inventory)[-MAX_LEVELS:]

    def depth(self, inventory: int) -> int:
        """The largest taker sell amount (before the fee) the maker would take now."""
        ladder = self.ladder(inventory)
        return ladder[-1][0] if ladder else 0

    def price_exact_input(self, maker_receives: int, inventory: int) -> int | None:
        """What the maker gives for receiving `maker_receives`: the rounded-down interpolation
        of the ladder; None beyond the depth, or when it would give nothing."""
        ladder = self.ladder(inventory)
        if maker_receives <= 0 or not ladder or maker_receives > ladder[-1][0]:
            return None
        points = [(0, 0), *ladder]
        index = bisect.bisect_left(points, (maker_receives, -1))
        if points[index][0] == maker_receives:
            given = points[index][1]
        else:
            given = _interpolate(points[index - 1], points[index], maker_receives)
        return given or None

    def price_exact_output(self, maker_gives: int, inventory: int) -> int | None:
        """The least the maker takes for giving `maker_gives`: the rounded-up inverse of the
        ladder's interpolation, so `price_exact_input` of the answer gives at least
        `maker_gives`; None beyond the depth."""
        ladder = self.ladder(inventory)
        if maker_gives <= 0 or not ladder or maker_gives > ladder[-1][1]:
            return None
        points = [(0, 0), *ladder]
        index = bisect.bisect_left([b for _, b in points], maker_gives)
        (s0, b0), (s1, b1) = points[index - 1], points[index]
        if b1 == maker_gives:
            return s1
        return s0 + -(-(maker_gives - b0) * (s1 - s0) // (b1 - b0))


def _grid_sizes(unit: int) -> Iterator[int]:
    """Sell sizes 2**k whole tokens, k from the smallest nonzero atomic amount upwards."""
    for shift in range(unit.bit_length() - 1, 0, -1):
        yield unit >> shift
    k = 0
    while True:
        yield unit << k
        k += 1


def _interpolate(start: Point, end: Point, sell_amount: int) -> int:
    """Integer linear interpolation of the buy amount at `sell_amount`, rounded down."""
    (s0, b0), (s1, b1) = start, end
    return b0 + (sell_amount - s0) * (b1 - b0) // (s1 - s0)


def interpolate_levels(levels: list[Point], sell_amount: int) -> Fraction | None:
    """Exact (unrounded) interpolation of published levels at `sell_amount`; None outside
    them. What a taker may expect from levels, for checking firm prices against them."""
    if not levels or not levels[0][0] <= sell_amount <= levels[-1][0]:
        return None
    for (s0, b0), (s1, b1) in itertools.pairwise(levels):
        if s0 <= sell_amount <= s1:
            return b0 + Fraction((sell_amount - s0) * (b1 - b0), s1 - s0)
    return Fraction(levels[0][1])


class PricingModel:
    """A maker's prices for every direction its mids cover."""

    def __init__(self, params: PricingParams) -> None:
        self.params = params
        self._curves: dict[tuple[TokenSpec, TokenSpec], PriceCurve | None] = {}

    def curve(self, sell: TokenSpec, buy: TokenSpec) -> PriceCurve | None:
        """The curve of one direction; None when no mid covers the pair (no quotes)."""
        key = (sell, buy)
        if key not in self._curves:
            self._curves[key] = self._make_curve(sell, buy)
        return self._curves[key]

    def _make_curve(self, sell: TokenSpec, buy: TokenSpec) -> PriceCurve | None:
        params = self.params
        price = params.mid(sell.symbol, buy.symbol)
        if price is None:
            return None
        usd = params.usd_price(sell.symbol) or Fraction(1)
        return PriceCurve(
            sell_decimals=sell.decimals,
            buy_decimals=buy.decimals,
            price=price,
            half_spread_bps=params.spread_bps / 2,
            impact_bps=params.impact_bps,
            impact_reference_sell=params.impact_reference_usd / usd,
            impact_exponent=params.impact_exponent,
            max_impact_bps=params.max_impact_bps,
            max_inventory_fraction=params.max_inventory_fraction,
        )

    def levels(self, sell: TokenSpec, buy: TokenSpec, inventory: int) -> list[Point]:
        curve = self.curve(sell, buy)
        return [] if curve is None else curve.levels(inventory)

    def depth(self, sell: TokenSpec, buy: TokenSpec, inventory: int) -> int:
        curve = self.curve(sell, buy)
        return 0 if curve is None else curve.depth(inventory)

    def price_exact_input(
        self, sell: TokenSpec, buy: TokenSpec, maker_receives: int, inventory: int
    ) -> int | None:
        curve = self.curve(sell, buy)
        return None if curve is None else curve.price_exact_input(maker_receives, inventory)

    def price_exact_output(
        self, sell: TokenSpec, buy: TokenSpec, maker_gives: int, inventory: int
    ) -> int | None:
        curve = self.curve(sell, buy)
        return None if curve is None else curve.price_exact_output(maker_gives, inventory)
