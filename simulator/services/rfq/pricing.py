"""Indicative pricing from makers' published levels: the preview and the price ladder. No maker
is asked and nothing is locked; the numbers can be a few seconds stale."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from simulator.clock import Clock
from simulator.services.rfq.makers import MakerRegistry, OnlineMaker
from simulator.services.rfq.model import NoQuoteReason, RoutingState
from simulator.services.rfq.trades import TradeSpec
from simulator.services.shared.amounts import (
    Curve,
    buy_for_sell,
    combine,
    fee_on,
    gross,
    min_sell_amount,
    net_of_fee,
    sample,
    sell_for_buy,
)
from simulator.services.shared.venue import ChainVenue

LADDER_CACHE_S = 2.0


@dataclass(frozen=True)
class MakerLeg:
    wallet: str
    maker_receives: int
    maker_gives: int


@dataclass(frozen=True)
class Indicative:
    legs: tuple[MakerLeg, ...]
    fee_bps: int

    @property
    def maker_receives(self) -> int:
        return sum(leg.maker_receives for leg in self.legs)

    @property
    def fee(self) -> int:
        return sum(fee_on(leg.maker_receives, self.fee_bps) for leg in self.legs)

    @property
    def taker_pays(self) -> int:
        return self.maker_receives + self.fee

    @property
    def buy_amount(self) -> int:
        return sum(leg.maker_gives for leg in self.legs)


@dataclass(frozen=True)
class LevelDepth:
    sell: int  # taker side, fee-inclusive (gross)
    buy: int


@dataclass
class PreviewOutcome:
    routing: RoutingState
    depth: LevelDepth
    price: Indicative | None = None
    reason: NoQuoteReason | None = None


class LadderPoint(NamedTuple):
    sell_amount: int  # what the taker sells, fee included
    buy_amount: int  # what the taker receives


@dataclass(frozen=True)
class PairLadder:
    sell_token: str
    buy_token: str
    sell_decimals: int
    buy_decimals: int
    min_sell_amount: int
    max_sell_amount: int
    levels: list[LadderPoint]


@dataclass(frozen=True)
class LadderView:
    chain_id: int
    as_of: float
    pairs: list[PairLadder]


@dataclass
class _LadderCache:
    entries: dict[int, LadderView] = field(default_factory=dict)  # by chain id


def eligible_makers(registry: MakerRegistry, spec: TradeSpec) -> list[OnlineMaker]:
    """Online makers for the chain's environment; a restricted list narrows them. A wallet that
    is not an online maker matches nothing."""
    makers = registry.makers_for(spec.chain.environment)
    if spec.restricted:
        allowed = {w.lower() for w in spec.restricted}
        makers = [m for m in makers if m.wallet_key in allowed]
    return makers


def best_single(curves: list[tuple[str, Curve]], spec: TradeSpec) -> MakerLeg | None:
    best: MakerLeg | None = None
    if spec.sell_amount is not None:
        receives = net_of_fee(spec.sell_amount, spec.fee_bps)
        for wallet, curve in curves:
            gives = buy_for_sell(curve, receives)
            if gives and (best is None or gives > best.maker_gives):
                best = MakerLeg(wallet, receives, gives)
    else:
        assert spec.buy_amount is not None
        for wallet, curve in curves:
            needed = sell_for_buy(curve, spec.buy_amount)
            if needed and (best is None or needed < best.maker_receives):
                best = MakerLeg(wallet, needed, spec.buy_amount)
    return best


def split(curves: list[tuple[str, Curve]], spec: TradeSpec) -> tuple[MakerLeg, ...] | None:
    """A bundle: fill the size from the best marginal segments of every maker's curve."""
    segments: list[tuple[float, str, int, int]] = []
    for wallet, curve in curves:
        prev_s, prev_b = 0, 0
        for s, b in curve:
            segments.append(((b - prev_b) / (s - prev_s), wallet, s - prev_s, b - prev_b))
            prev_s, prev_b = s, b
    segments.sort(key=lambda seg: seg[0], reverse=True)
    by_wallet = dict(curves)
    taken: dict[str, int] = {}  # maker -> maker_receives allocated
    if spec.sell_amount is not None:
        remaining = net_of_fee(spec.sell_amount, spec.fee_bps)
        for _, wallet, ds, _db in segments:
            if remaining <= 0:
                break
            take = min(ds, remaining)
            taken[wallet] = taken.get(wallet, 0) + take
            remaining -= take
        if remaining > 0:
            return None
        legs = [MakerLeg(w, r, buy_for_sell(by_wallet[w], r) or 0) for w, r in taken.items()]
    else:
        assert spec.buy_amount is not None
        remaining = spec.buy_amount
        gives: dict[str, int] = {}
        for _, wallet, _ds, db in segments:
            if remaining <= 0:
                break
            take = min(db, remaining)
            gives[wallet] = gives.get(wallet, 0) + take
            remaining -= take
        if remaining > 0:
            return None
        legs = [MakerLeg(w, sell_for_buy(by_wallet[w], g) or 0, g) for w, g in gives.items()]
    if any(leg.maker_receives <= 0 or leg.maker_gives <= 0 for leg in legs):
        return None
    return tuple(legs)


class IndicativePricing:
    def __init__(self, clock: Clock, registry: MakerRegistry) -> None:
        self._clock = clock
        self._registry = registry
        self._ladders = _LadderCache()  # ladder per chain, rebuilt when older than LADDER_CACHE_S

    def curves(self, makers: list[OnlineMaker], spec: TradeSpec) -> list[tuple[str, Curve]]:
        out = []
        for maker in makers:
            curve = self._registry.fresh_curve(maker, spec.pair_key)
            if curve:
                out.append((maker.wallet, curve))
        return out

    def preview(self, spec: TradeSpec) -> PreviewOutcome:
        makers = eligible_makers(self._registry, spec)
        curves = self.curves(makers, spec)
        preferred = {w.lower() for w in spec.preferred}
        routing = RoutingState(
            preference_applied=bool(spec.preferred),
            restriction_applied=bool(spec.restricted),
            target_maker_wallets=list(spec.preferred or spec.restricted),
            preferred_quotes_received=sum(1 for w, _ in curves if w.lower() in preferred),
            open_market_quotes_received=sum(1 for w, _ in curves if w.lower() not in preferred),
        )
        if spec.restricted:
            routing.preferred_quotes_received = len(curves)
            routing.open_market_quotes_received = 0
        depth = LevelDepth(
            sell=gross(sum(c[-1][0] for _, c in curves), spec.fee_bps),
            buy=sum(c[-1][1] for _, c in curves),
        )
        if not makers:
            reason: NoQuoteReason = (
                "no_restricted_liquidity" if spec.restricted else "no_makers_online"
            )
            return PreviewOutcome(routing, depth, reason=reason)
        single = best_single(curves, spec)
        legs = (single,) if single is not None else split(curves, spec)
        if legs is None:
            reason = "no_restricted_liquidity" if spec.restricted else "no_valid_quote"
            return PreviewOutcome(routing, depth, reason=reason)
        routing.fallback_used = bool(preferred) and any(
            leg.wallet.lower() not in preferred for leg in legs
        )
        return PreviewOutcome(routing, depth, price=Indicative(legs, spec.fee_bps))

    def ladder(self, chain: ChainVenue) -> LadderView:
        cached = self._ladders.entries.get(chain.chain_id)
        now = self._clock.time()
        if cached is not None and now - cached.as_of < LADDER_CACHE_S:
            return cached
        makers = self._registry.makers_for(chain.environment)
        pairs = []
        for corridor in chain.corridors:
            if corridor.timing.mode != "RFQ":
                continue
            fee_bps = corridor.timing.fee_bps
            for sell, buy in ((corridor.base, corridor.quote), (corridor.quote, corridor.base)):
                key = (chain.chain_id, sell.address.lower(), buy.address.lower())
                curves = [c for m in makers if (c := self._registry.fresh_curve(m, key))]
                combined = sample(combine(curves)) if curves else []
                levels = [LadderPoint(gross(s, fee_bps), b) for s, b in combined]
                pairs.append(
                    PairLadder(
                        sell_token=sell.address,
                        buy_token=buy.address,
                        sell_decimals=sell.decimals,
                        buy_decimals=buy.decimals,
                        min_sell_amount=min_sell_amount(chain.min_size, sell.decimals, fee_bps),
                        max_sell_amount=levels[-1][0] if levels else 0,
                        levels=levels,
                    )
                )
        view = LadderView(chain_id=chain.chain_id, as_of=now, pairs=pairs)
        self._ladders.entries[chain.chain_id] = view
        return view
