"""Rates: a mid of 1 NGN per NGNS moved by a seeded random walk (one step per minute of clock
time, each at most ±`rate_walk_per_minute`) and by /sandbox/rates/shift; quotes apply the spread
and the fee and round the target down to its decimals."""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

from provider_sandbox.config import SandboxConfig
from provider_sandbox.state import Side
from rfqkit.random_state import RandomStream

RATE_PLACES = Decimal("0.00000001")  # rates carry eight decimals
FIAT_PLACES = Decimal("0.01")  # NGN
TOKEN_PLACES = Decimal("0.000001")  # NGNS (6 decimals)


@dataclass
class WalkState:
    """Where a RateWalk stands (saved with the sandbox's state)."""

    random: RandomStream
    max_step: float
    levels: list[float]


class RateWalk:
    """The walk's level after k whole minutes is the product of k seeded steps. Its own
    Random (derived from the seed) keeps rates independent of how many ids were drawn, so the
    same seed and the same clock give the same rate whatever else happened."""

    def __init__(self, seed: int, max_step: float) -> None:
        self._random = random.Random(f"provider-sandbox-rates:{seed}")  # only the walk draws here
        self._max_step = max_step  # largest relative move per minute
        self._levels = [1.0]  # level after index minutes, extended on demand

    def saved(self) -> WalkState:
        return WalkState(random=self._random, max_step=self._max_step, levels=list(self._levels))

    def restore(self, saved: WalkState) -> None:
        self._random = saved.random
        self._max_step = saved.max_step
        self._levels = list(saved.levels)

    def level(self, minutes: int) -> float:
        if minutes < 0:
            return 1.0
        while len(self._levels) <= minutes:
            step = self._random.uniform(-self._max_step, self._max_step)
            self._levels.append(self._levels[-1] * (1.0 + step))
        return self._levels[minutes]


def mid_rate(walk: RateWalk, epoch: float, now: float, shift: Decimal) -> Decimal:
    """NGN per NGNS at `now`."""
    minutes = int((now - epoch) // 60)
    return (Decimal(repr(walk.level(minutes))) * shift).quantize(RATE_PLACES)


def shift_factor(current: Decimal, percent: Decimal) -> Decimal:
    """A shift of +2 moves the mid up 2 % from where it is now (shifts compound)."""
    return current * (Decimal(1) + percent / Decimal(100))


@dataclass(frozen=True)
class PricedConversion:
    rate: Decimal  # target per source
    fee: Decimal  # target currency
    target_amount: Decimal  # (source x rate) - fee, rounded down
    rate_label: str
    fee_label: str


def source_places(side: Side) -> Decimal:
    return FIAT_PLACES if side == "buy" else TOKEN_PLACES


def target_places(side: Side) -> Decimal:
    return TOKEN_PLACES if side == "buy" else FIAT_PLACES


def price(
    side: Side, source_amount: Decimal, mid: Decimal, config: SandboxConfig
) -> PricedConversion:
    if side == "buy":
        rate = (config.buy_spread / mid).quantize(RATE_PLACES, ROUND_DOWN)
        percent, flat, source, target = config.buy_fee_percent, config.buy_fee_flat, "NGN", "NGNS"
    else:
        rate = (mid * config.sell_spread).quantize(RATE_PLACES, ROUND_DOWN)
        percent, flat, source, target = config.sell_fee_percent, config.sell_fee_flat, "NGNS", "NGN"
    places = target_places(side)
    gross = source_amount * rate
    fee = (gross * percent / Decimal(100) + flat).quantize(places, ROUND_HALF_UP)
    target_amount = (gross - fee).quantize(places, ROUND_DOWN)
    return PricedConversion(
        rate=rate,
        fee=fee,
        target_amount=target_amount,
        rate_label=f"1 {source} = {rate.normalize():f} {target}",
        fee_label=f"{fee:,} {target} ({percent}% + {flat} {target})",
    )
