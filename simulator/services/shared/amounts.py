"""Integer arithmetic of amounts: fees, minimum sizes, rates, and piecewise-linear level curves.
Everything is in atomic units with exact integers; nothing here rounds in the taker's favour
by accident (each rounding direction is stated)."""

from __future__ import annotations

from decimal import Decimal

RAY = 10**27
BPS = 10_000


def fee_on(maker_receives: int, fee_bps: int) -> int:
    """The protocol fee on a maker's output, rounded down (the rule makers sign by)."""
    return maker_receives * fee_bps // BPS


def gross(maker_receives: int, fee_bps: int) -> int:
    """What leaves the taker for an order paying `maker_receives` to the maker."""
    return maker_receives + fee_on(maker_receives, fee_bps)


def net_of_fee(gross_amount: int, fee_bps: int) -> int:
    """The largest maker output whose gross (output + fee) does not exceed `gross_amount`:
    takerPays may sit an atomic unit or so under an exact-input cap."""
    x = gross_amount * BPS // (BPS + fee_bps)
    while gross(x + 1, fee_bps) <= gross_amount:
        x += 1
    while x > 0 and gross(x, fee_bps) > gross_amount:
        x -= 1
    return x


def whole_tokens(amount: Decimal, decimals: int) -> int:
    """`amount` whole tokens in atomic units (rounded up: a minimum is never undercut)."""
    scaled = amount * (Decimal(10) ** decimals)
    integral: int = int(scaled)
    return integral if scaled == integral else integral + 1


def min_sell_amount(min_size: Decimal, decimals: int, fee_bps: int) -> int:
    """Smallest firm exact-input size: `min_size` whole tokens, or the smallest output that can
    carry a fee of at least one atomic unit plus that fee, whichever is larger."""
    smallest_feeable = -(-BPS // fee_bps) if fee_bps else 1
    return max(whole_tokens(min_size, decimals), gross(smallest_feeable, fee_bps))


def rate_ray(sell: int, sell_decimals: int, buy: int, buy_decimals: int) -> int:
    """Decimal-normalized buy-per-sell rate, RAY-scaled, rounded down."""
    if sell == 0:
        return 0
    rate: int = buy * RAY * 10**sell_decimals // (sell * 10**buy_decimals)
    return rate


def shortfall_bps(best: int, other: int) -> float:
    """How far the rate `other` falls short of the rate `best`, in basis points of `best`,
    rounded to two decimals (negative: `other` is the better one; 0 without a `best`)."""
    if best == 0:
        return 0.0
    return round((best - other) * BPS / best, 2)


Curve = list[tuple[int, int]]  # increasing (sell, buy) points; (0, 0) is implied


def buy_for_sell(curve: Curve, sell: int) -> int | None:
    """Interpolated output for input `sell` (rounded down); None beyond the curve's depth."""
    prev_s, prev_b = 0, 0
    for s, b in curve:
        if sell <= s:
            if s == prev_s:
                return b
            return prev_b + (b - prev_b) * (sell - prev_s) // (s - prev_s)
        prev_s, prev_b = s, b
    return None


def sell_for_buy(curve: Curve, buy: int) -> int | None:
    """Input needed for output `buy` (rounded up); None beyond the curve's depth."""
    prev_s, prev_b = 0, 0
    for s, b in curve:
        if buy <= b:
            if b == prev_b:
                return s
            return prev_s + -(-(s - prev_s) * (buy - prev_b) // (b - prev_b))
        prev_s, prev_b = s, b
    return None


def valid_curve(points: Curve) -> bool:
    """Up to nine points, sell strictly increasing, buy increasing, all positive."""
    if not 0 < len(points) <= 9:
        return False
    prev_s, prev_b = 0, 0
    for s, b in points:
        if s <= prev_s or b < prev_b or b <= 0:
            return False
        prev_s, prev_b = s, b
    return True


def combine(curves: list[Curve]) -> Curve:
    """The best combined execution curve of several makers: their linear segments taken in
    order of marginal rate (best first). Exact for concave curves, the usual shape."""
    segments: list[tuple[int, int]] = []
    for curve in curves:
        prev_s, prev_b = 0, 0
        for s, b in curve:
            segments.append((s - prev_s, b - prev_b))
            prev_s, prev_b = s, b
    segments.sort(key=lambda seg: seg[1] / seg[0], reverse=True)
    combined: Curve = []
    total_s, total_b = 0, 0
    for ds, db in segments:
        total_s += ds
        total_b += db
        combined.append((total_s, total_b))
    return combined


def sample(curve: Curve, points: int = 9) -> Curve:
    """Up to `points` points spread evenly over the curve's depth (the last is the depth)."""
    if not curve:
        return []
    depth = curve[-1][0]
    out: Curve = []
    for i in range(1, points + 1):
        sell = depth * i // points
        buy = buy_for_sell(curve, sell)
        if sell > 0 and buy is not None and (not out or sell > out[-1][0]):
            out.append((sell, buy))
    return out
