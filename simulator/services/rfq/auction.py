"""The firm-quote auction (spec 1-rfq-v2, POST /v2/rfq/request): ask the eligible makers for a
signed order within the corridor's reply budget, keep only orders that will settle, and pick
the best single maker — else a bundle of several makers that covers the size exactly.

Steering: preferred makers are asked first and the rest only after the preferred wait (250 ms)
unless a preferred quote already covers the size; restricted makers are the only ones asked."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from rfqkit.maker_protocol import Released, Rfq
from simulator.clock import Clock
from simulator.errors import UpstreamError
from simulator.randomness import RandomSource
from simulator.services.rfq.history import MakerOffer, Outcome, RfqHistory
from simulator.services.rfq.makers import (
    DeclineReply,
    MakerRegistry,
    MalformedReply,
    OnlineMaker,
)
from simulator.services.rfq.model import FilledOrder, NoQuoteReason, RoutingState
from simulator.services.rfq.ports import ChainUnreadable, HoldLedger, MakerChainReader
from simulator.services.rfq.pricing import (
    IndicativePricing,
    LevelDepth,
    MakerLeg,
    eligible_makers,
    split,
)
from simulator.services.rfq.quote_checks import (
    Ask,
    QuoteRejected,
    check_signature,
    check_terms,
    filled_order,
    hold_if_funded,
    offer,
)
from simulator.services.rfq.trades import TradeSpec
from simulator.services.shared.amounts import fee_on, net_of_fee, shortfall_bps

ANSWER_MARGIN_S = 0.015  # kept back from the reply budget for selection and the response
MIN_QUOTE_LIFE_S = 5.0  # a maker's cutoff must leave the taker at least this long after replyBy


@dataclass
class AuctionOutcome:
    routing: RoutingState
    depth: LevelDepth
    orders: list[FilledOrder] = field(default_factory=list)  # empty: no quote
    reason: NoQuoteReason | None = None
    # Seconds spent waiting for makers' answers (each round: from its first `rfq` sent to its
    # last answer read or its timeout), reported to callers in the Server-Timing header so the
    # simulator's own time can be told apart from the makers' (docs/decisions.md).
    maker_wait_s: float = 0.0
    # Each maker's own part of it: from the first round's start until its answer was read (or
    # its wait ended), by wallet; the makers asked in that round (Server-Timing `maker`).
    maker_waits_s: dict[str, float] = field(default_factory=dict)


@dataclass
class _Reply:
    maker: OnlineMaker
    ask: Ask
    order: FilledOrder | None  # None: declined, silent, late or invalid
    preferred: bool
    chain_error: bool = False  # the maker's funding could not be read on chain
    replied_at: float = 0.0  # monotonic: when the answer was read (or the wait timed out)
    lost_because: str = ""  # why it is not the quote, if it is not (the timeline's selection)
    offer: MakerOffer | None = None  # what its signed order offered, if it sent one that decoded


class Auction:
    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        registry: MakerRegistry,
        pricing: IndicativePricing,
        inventory: HoldLedger,
        chain: MakerChainReader,
        history: RfqHistory,
    ) -> None:
        self._clock = clock
        self._random = random
        self._registry = registry
        self._pricing = pricing
        self._inventory = inventory
        self._owners: dict[str, str] = {}  # the caller of each running auction, by rfq id
        self._chain = chain
        self._history = history  # every ask and answer, for the RFQ's timeline

    async def run(
        self,
        spec: TradeSpec,
        rfq_id: str,
        taker: str,
        reply_by: float,
        latest_expiry: float,
        owner: str = "",
    ) -> AuctionOutcome:
        """`reply_by` and `latest_expiry` (the RFQ's creation plus the quote TTL) are simulator
        time; the wait itself is measured on the monotonic clock. `owner`: the caller whose RFQ
        it is (each maker hold names it: another caller's no-quote reads it)."""
        self._owners[rfq_id] = owner
        try:
            return await self._run(spec, rfq_id, taker, reply_by, latest_expiry)
        finally:
            del self._owners[rfq_id]

    async def _run(
        self, spec: TradeSpec, rfq_id: str, taker: str, reply_by: float, latest_expiry: float
    ) -> AuctionOutcome:
        makers = eligible_makers(self._registry, spec)
        preferred_set = {w.lower() for w in spec.preferred}
        routing = RoutingState(
            preference_applied=bool(spec.preferred),
            restriction_applied=bool(spec.restricted),
            target_maker_wallets=list(spec.preferred or spec.restricted),
        )
        curves = self._pricing.curves(makers, spec)
        depth = LevelDepth(
            sell=sum(c[-1][0] for _, c in curves), buy=sum(c[-1][1] for _, c in curves)
        )
        depth = LevelDepth(sell=depth.sell + fee_on(depth.sell, spec.fee_bps), buy=depth.buy)
        if not makers:
            reason: NoQuoteReason = (
                "no_restricted_liquidity" if spec.restricted else "no_makers_online"
            )
            return AuctionOutcome(routing, depth, reason=reason)
        # Stop waiting for makers a little before replyBy, so that choosing, checking and
        # rendering still land the answer at the budget rather than after it.
        budget_end = self._clock.monotonic() + max(
            0.0, reply_by - self._clock.time() - ANSWER_MARGIN_S
        )
        # The latest expiry counts from the RFQ's creation, not from now: under load the checks
        # before the auction take milliseconds, and a quote may not outlive createdAt + TTL.
        expiry_window = (reply_by + MIN_QUOTE_LIFE_S, latest_expiry)
        full = self._full_size_leg(spec)

        first = [m for m in makers if m.wallet_key in preferred_set] if preferred_set else makers
        rest = [m for m in makers if m.wallet_key not in preferred_set] if preferred_set else []
        first_round = "preferred" if preferred_set else "open"
        replies: list[_Reply] = []
        round_start = self._clock.monotonic()
        tasks = [
            asyncio.create_task(
                self._ask(
                    m, spec, rfq_id, taker, full, budget_end, expiry_window, True, first_round
                )
            )
            for m in first
        ]
        if rest:
            head_start_end = min(
                budget_end, self._clock.monotonic() + spec.corridor.timing.preferred_wait_ms / 1000
            )
            covered = await self._preferred_cover(tasks, head_start_end)
            if not covered:
                routing.fallback_used = True
                tasks += [
                    asyncio.create_task(
                        self._ask(
                            m, spec, rfq_id, taker, full, budget_end, expiry_window, False, "open"
                        )
                    )
                    for m in rest
                ]
        replies = list(await asyncio.gather(*tasks))
        maker_wait = max(r.replied_at for r in replies) - round_start
        waits = {r.maker.wallet: r.replied_at - round_start for r in replies}
        usable = [r for r in replies if r.order is not None]
        routing.preferred_quotes_received = sum(
            1 for r in usable if r.preferred and (preferred_set or spec.restricted)
        )
        routing.open_market_quotes_received = len(usable) - routing.preferred_quotes_received
        if usable:
            best = self._best(usable, spec)
            self._history.selected(
                rfq_id,
                "single",
                [best.maker.wallet],
                [
                    [r.maker.wallet, r.lost_because, self._behind(best, r)]
                    for r in replies
                    if r is not best
                ],
            )
            await self._release_losers([r for r in usable if r is not best], rfq_id)
            assert best.order is not None
            return AuctionOutcome(
                routing, depth, [best.order], maker_wait_s=maker_wait, maker_waits_s=waits
            )
        if any(r.chain_error for r in replies):
            raise UpstreamError(
                "Makers' funding could not be read on chain; retry",
                details={"reason": "chain_unreachable"},
            )
        bundle_start = self._clock.monotonic()
        bundle, bundle_replied = await self._bundle(
            spec, rfq_id, taker, makers, budget_end, expiry_window, preferred_set
        )
        maker_wait += max(0.0, bundle_replied - bundle_start)
        if bundle is not None:
            self._history.selected(
                rfq_id,
                "bundle",
                [o.maker for o in bundle],
                [[r.maker.wallet, r.lost_because, None] for r in replies],
            )
            if preferred_set and any(o.maker.lower() not in preferred_set for o in bundle):
                routing.fallback_used = True
            routing.open_market_quotes_received += sum(
                1 for o in bundle if not preferred_set or o.maker.lower() not in preferred_set
            )
            routing.preferred_quotes_received += sum(
                1 for o in bundle if preferred_set and o.maker.lower() in preferred_set
            )
            return AuctionOutcome(
                routing, depth, bundle, maker_wait_s=maker_wait, maker_waits_s=waits
            )
        reason = "no_restricted_liquidity" if spec.restricted else "no_valid_quote"
        return AuctionOutcome(
            routing, depth, reason=reason, maker_wait_s=maker_wait, maker_waits_s=waits
        )

    @staticmethod
    def _full_size_leg(spec: TradeSpec) -> MakerLeg:
        if spec.sell_amount is not None:
            return MakerLeg("", net_of_fee(spec.sell_amount, spec.fee_bps), 0)
        assert spec.buy_amount is not None
        return MakerLeg("", 0, spec.buy_amount)

    @staticmethod
    def _best(usable: list[_Reply], spec: TradeSpec) -> _Reply:
        # Exact input: most output for the taker. Exact output: least input. Ties: first asked.
        if spec.exact_input:
            return max(usable, key=lambda r: r.order.maker_gives if r.order else 0)
        return min(usable, key=lambda r: r.order.taker_pays if r.order else 0)

    @staticmethod
    def _behind(best: _Reply, loser: _Reply) -> float | None:
        """How far a usable losing quote's rate falls short of the winner's (bps); None for an
        answer that was not a usable quote."""
        if loser.order is None or loser.offer is None or best.offer is None:
            return None
        return shortfall_bps(best.offer.rate_ray, loser.offer.rate_ray)

    async def _release_losers(self, losers: list[_Reply], rfq_id: str) -> None:
        for loser in losers:
            self._inventory.release_quote(loser.ask.quote_id)
            await self._registry.notify(
                loser.maker.wallet,
                loser.maker.environment,
                Released(quote_id=loser.ask.quote_id, rfq_id=rfq_id, reason="not_selected"),
            )

    async def _bundle(
        self,
        spec: TradeSpec,
        rfq_id: str,
        taker: str,
        makers: list[OnlineMaker],
        budget_end: float,
        expiry_window: tuple[float, float],
        preferred_set: set[str],
    ) -> tuple[list[FilledOrder] | None, float]:
        """No single maker covered the size: plan legs from the published levels and ask each
        maker for its leg. All legs must come back valid, or there is no bundle. Also returns
        when the last leg's answer was read (monotonic)."""
        started = self._clock.monotonic()
        if budget_end - started <= 0.01:
            return None, started
        legs = split(self._pricing.curves(makers, spec), spec)
        if legs is None or len(legs) < 2:
            return None, started
        by_wallet = {m.wallet: m for m in makers}
        tasks = [
            asyncio.create_task(
                self._ask(
                    by_wallet[leg.wallet],
                    spec,
                    rfq_id,
                    taker,
                    leg,
                    budget_end,
                    expiry_window,
                    leg.wallet.lower() in preferred_set,
                    "bundle",
                )
            )
            for leg in legs
        ]
        replies = list(await asyncio.gather(*tasks))
        replied = max(r.replied_at for r in replies)
        if any(r.chain_error for r in replies):
            await self._release_losers([r for r in replies if r.order is not None], rfq_id)
            raise UpstreamError(
                "Makers' funding could not be read on chain; retry",
                details={"reason": "chain_unreachable"},
            )
        if all(r.order is not None for r in replies):
            return [r.order for r in replies if r.order is not None], replied
        await self._release_losers([r for r in replies if r.order is not None], rfq_id)
        return None, replied

    async def _preferred_cover(self, tasks: list[asyncio.Task[_Reply]], until: float) -> bool:
        """Waits out the preferred makers' head start; True as soon as one of them quotes the
        size. Preferred makers that decline (or none at all) do not end the head start early:
        the rest are asked only once it is over (spec: preferred wait before the rest)."""

        def covered() -> bool:
            return any(
                t.done() and not t.cancelled() and t.result().order is not None for t in tasks
            )

        pending = set(tasks)
        while not covered():
            remaining = until - self._clock.monotonic()
            if remaining <= 0:
                return False
            if not pending:
                await asyncio.sleep(remaining)
                return False
            _, pending = await asyncio.wait(
                pending, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
        return True

    async def _ask(
        self,
        maker: OnlineMaker,
        spec: TradeSpec,
        rfq_id: str,
        taker: str,
        leg: MakerLeg,
        budget_end: float,
        expiry_window: tuple[float, float],
        preferred: bool,
        round_: str,
    ) -> _Reply:
        quote_id = self._random.new_id("mq", 10)
        exact_input = spec.exact_input
        receives = leg.maker_receives if exact_input else None
        gives = None if exact_input else leg.maker_gives
        ask = Ask(
            rfq_id=rfq_id,
            quote_id=quote_id,
            chain=spec.chain,
            maker=maker.wallet,
            taker=taker,
            sell_token=spec.sell.address,
            buy_token=spec.buy.address,
            exact_input=exact_input,
            owner=self._owners.get(rfq_id, ""),
            maker_receives=receives,
            maker_gives=gives,
            fee_bps=spec.fee_bps,
            min_expires_at=expiry_window[0],
            max_expires_at=expiry_window[1],
        )
        remaining = budget_end - self._clock.monotonic()
        message = Rfq(
            quote_id=quote_id,
            rfq_id=rfq_id,
            chain_id=spec.chain.chain_id,
            sell_token=spec.sell.address,
            buy_token=spec.buy.address,
            kind="exact_input" if exact_input else "exact_output",
            maker_receives=receives,
            fee_amount=fee_on(receives, spec.fee_bps) if receives is not None else None,
            maker_gives=gives,
            fee_bps=spec.fee_bps,
            taker=taker,
            reactor=spec.chain.contracts.reactor,
            signature_transfer=spec.chain.contracts.signature_transfer,
            reply_by_ms=int((self._clock.time() + remaining) * 1000),
            min_expires_at_ms=int(expiry_window[0] * 1000) + 1,
            max_expires_at_ms=int(expiry_window[1] * 1000),
        )
        history = self._history
        history.asked(
            rfq_id, maker.wallet, maker.maker_id, quote_id, round_, preferred and round_ != "open"
        )
        asked_at = self._clock.monotonic()
        reply = await self._registry.ask(maker, message, remaining)
        replied_at = self._clock.monotonic()
        latency_ms = (replied_at - asked_at) * 1000

        offered: MakerOffer | None = None  # once its signed order is read

        def answered(
            outcome: Outcome, reason: str | None = None, detail: str | None = None
        ) -> None:
            history.answered(
                rfq_id,
                maker.wallet,
                maker.maker_id,
                quote_id,
                outcome,
                latency_ms,
                reason,
                detail,
                offered,
            )

        if isinstance(reply, DeclineReply):
            answered("declined", reply.reason)
            return _Reply(
                maker, ask, None, preferred, replied_at=replied_at, lost_because="declined"
            )
        if reply is None:
            # Silent so far (an answer after the budget makes it late: MakerRegistry), or gone.
            online = self._registry.online.get(maker.session_key) is maker
            outcome: Outcome = "silent" if online else "disconnected"
            answered(outcome)
            return _Reply(maker, ask, None, preferred, replied_at=replied_at, lost_because=outcome)
        try:
            if isinstance(reply, MalformedReply):
                raise QuoteRejected(reply.detail, "malformed")
            order, signature = reply.order, reply.signature
            offered = offer(order, spec.sell.decimals, spec.buy.decimals)
            expires_at = reply.expires_at_ms / 1000
            check_terms(ask, order, expires_at)
            check_signature(ask, order, signature)
            try:
                funding = await self._chain.maker_funding(
                    spec.chain.chain_id,
                    order.inputToken,
                    maker.wallet,
                    spec.chain.contracts.signature_transfer,
                    order.nonce,
                )
            except ChainUnreadable:
                # Unverifiable is not usable: never return a quote that might not settle.
                answered("unverified", "chain_unreadable")
                return _Reply(
                    maker,
                    ask,
                    None,
                    preferred,
                    chain_error=True,
                    replied_at=replied_at,
                    lost_because="unverified",
                )
            await hold_if_funded(ask, order, self._inventory, funding, expires_at)
        except QuoteRejected as rejected:
            answered("rejected", rejected.reason, rejected.detail)
            await self._registry.notify(
                maker.wallet,
                maker.environment,
                Released(
                    quote_id=quote_id, rfq_id=rfq_id, reason="invalid", detail=rejected.detail
                ),
            )
            return _Reply(
                maker,
                ask,
                None,
                preferred,
                replied_at=replied_at,
                lost_because=f"rejected: {rejected.reason}",
            )
        answered("quoted")
        order_entry = filled_order(ask, order, signature, expires_at)
        return _Reply(
            maker,
            ask,
            order_entry,
            preferred,
            replied_at=replied_at,
            lost_because="worse_price",
            offer=offered,
        )
