"""The book as v1 callers see it: the limit-order quote (fastFill and queue), prepare and place,
the records with their live status, the order book of one direction, and the executable offers
the swaps area composes from. Fills reach it from the fill index (`on_fill`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from simulator.clock import Clock
from simulator.errors import InvalidRequest, NotFound, UpstreamError
from simulator.services.access.callers import Caller
from simulator.services.access.environments import require_v1_chain
from simulator.services.limit_orders import book
from simulator.services.limit_orders.book import Steering
from simulator.services.limit_orders.chain_check import require_pair
from simulator.services.limit_orders.events import LimitOrderEvents
from simulator.services.limit_orders.history import CANCELLED_CAUSE
from simulator.services.limit_orders.live import BookChainView, LiveBook
from simulator.services.limit_orders.model import DerivedStatus, LimitOrder, derive_status
from simulator.services.limit_orders.placement import (
    Placement,
    PreparedPlacement,
    PreparedPricing,
    PrepareRequest,
    SignedPlacement,
)
from simulator.services.limit_orders.ports import (
    BookChainReader,
    ChainUnreadable,
    FillCatchUp,
    FillerBids,
)
from simulator.services.limit_orders.pricing import (
    FastFillOutcome,
    FastFillUnavailable,
    MakerDepth,
    PricePoint,
    fast_fill,
    min_buy_amount,
    queue_price,
)
from simulator.services.limit_orders.store import BookStore, SwapHold
from simulator.services.shared.fills import Fill
from simulator.services.shared.timelines import TimelineSink
from simulator.services.shared.venue import ChainVenue, VenueDirectory, VenueToken

OFFERS_CACHE_SIZE = 256  # cached rankings (direction x steering x minRate) before a reset


@dataclass(frozen=True)
class _CachedOffers:
    view: BookChainView  # the chain state it was ranked against
    epoch: int  # the store's epoch then
    until: float  # simulator time it stops holding (a deadline passes or a hold ends)
    offers: list[LimitOrder]


def chain_unreachable(exc: ChainUnreadable) -> UpstreamError:
    return UpstreamError(
        "The chain could not be read; retry", details={"reason": "chain_unreachable"}
    )


def steering_of(preferred: list[str] | None, restricted: list[str] | None) -> Steering:
    if preferred and restricted:
        raise InvalidRequest(
            "preferredLiquidityWallets and restrictedLiquidityWallets cannot be combined",
            details={"reason": "steering_conflict"},
        )
    return Steering.of(preferred, restricted)


@dataclass(frozen=True)
class LimitOrderQuoteResult:
    sell_amount: int
    min_buy_amount: int
    fast: FastFillOutcome
    queue: PricePoint | None

    # What GET /v1/limit-orders/quote shows of the fast fill: the priced outcome, or why there
    # is none, and the depth block either way (api/limit_orders/schemas.py reads these).
    @property
    def fast_fill(self) -> FastFillOutcome | None:
        return self.fast if self.fast.price is not None else None

    @property
    def fast_fill_unavailable_reason(self) -> FastFillUnavailable | None:
        return self.fast.reason

    @property
    def depth(self) -> MakerDepth:
        return self.fast.depth


@dataclass(frozen=True)
class ExecutableOffers:
    """Executable resting offers for a taker selling `sell` for `buy`, in matching order."""

    chain_id: int
    sell: VenueToken  # what the taker sells (the orders' buyToken)
    buy: VenueToken  # what the taker receives (the orders' sellToken)
    block: int  # the chain block the offers were checked at
    as_of: float  # simulator time of the answer
    offers: list[LimitOrder]


@dataclass(frozen=True)
class Executable:
    """The offers a swap may compose, with what it needs to build and check them."""

    chain: ChainVenue
    sell: VenueToken
    buy: VenueToken
    fee_bps: int
    view: BookChainView
    offers: list[LimitOrder]


class BookService:
    def __init__(
        self,
        clock: Clock,
        venue: VenueDirectory,
        store: BookStore,
        live: LiveBook,
        placement: Placement,
        reads: BookChainReader,
        index: FillCatchUp,
        bids: FillerBids,
        events: LimitOrderEvents,
        history: TimelineSink,
    ) -> None:
        self._clock = clock
        self._venue = venue
        self.store = store
        self.live = live
        self._placement = placement
        self._reads = reads
        self._index = index
        self._bids = bids
        self._events = events
        self.history = history  # every order's timeline (GET /_sim/limit-orders)
        self._offers: dict[tuple[object, ...], _CachedOffers] = {}  # see ranked()

    def state_restored(self) -> None:
        """The store was put back (reset, restore, a state directory): nothing cached from the
        state before may be offered."""
        self._offers.clear()
        self.live.forget()

    # --- pricing -----------------------------------------------------------------------

    async def quote(
        self,
        caller: Caller,
        *,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        sell_amount: int,
        margin_bps: int,
        preferred: list[str] | None = None,
        restricted: list[str] | None = None,
    ) -> LimitOrderQuoteResult:
        chain = require_v1_chain(self._venue, caller, chain_id)
        sell, buy, corridor = require_pair(chain, sell_token, buy_token)
        steering = steering_of(preferred, restricted)
        if sell_amount <= 0:
            raise InvalidRequest.for_field("sellAmount", "must be greater than zero")
        fee_bps = corridor.timing.fee_bps
        minimum = min_buy_amount(fee_bps)
        fast = self._fast_fill(chain, sell, buy, sell_amount, fee_bps, margin_bps, steering)
        view = await self._view(chain_id)
        competing = self.ranked(view, sell.address, buy.address)
        best = max((o.rate_ray for o in competing), default=None)
        queue = queue_price(best, sell_amount, sell.decimals, buy.decimals, minimum)
        return LimitOrderQuoteResult(sell_amount, minimum, fast, queue)

    def _fast_fill(
        self,
        chain: ChainVenue,
        sell: VenueToken,
        buy: VenueToken,
        sell_amount: int,
        fee_bps: int,
        margin_bps: int,
        steering: Steering,
    ) -> FastFillOutcome:
        key = (chain.chain_id, sell.address.lower(), buy.address.lower())
        bids = self._bids.filler_curves(chain.environment, key)
        if steering.restricted:
            bids = [(w, c) for w, c in bids if w.lower() in steering.restricted]

        def price(among: Sequence[tuple[str, list[tuple[int, int]]]]) -> FastFillOutcome:
            return fast_fill(
                among,
                sell_amount,
                sell.decimals,
                buy.decimals,
                fee_bps=fee_bps,
                margin_bps=margin_bps,
                minimum=min_buy_amount(fee_bps),
            )

        outcome = price(bids)
        if steering.preferred:
            preferred = [(w, c) for w, c in bids if w.lower() in steering.preferred]
            first = price(preferred)
            if first.price is not None:
                return FastFillOutcome(outcome.depth, first.price, None)
        return outcome

    async def prepare(self, caller: Caller, request: PrepareRequest) -> PreparedPlacement:
        if (request.buy_amount is None) == (request.pricing_mode is None):
            raise InvalidRequest(
                "Send exactly one of buyAmount or pricing",
                details={"reason": "exactly_one_price"},
            )
        if request.buy_amount is not None:
            return self._placement.build(caller, request, request.buy_amount, None)
        quoted = await self.quote(
            caller,
            chain_id=request.chain_id,
            sell_token=request.sell_token,
            buy_token=request.buy_token,
            sell_amount=request.sell_amount,
            margin_bps=request.margin_bps,
            preferred=request.preferred,
            restricted=request.restricted,
        )
        mode = request.pricing_mode
        assert mode is not None
        point = quoted.fast.price if mode == "fastFill" else quoted.queue
        if point is None:
            reason = quoted.fast.reason if mode == "fastFill" else "queue_unavailable"
            raise InvalidRequest(
                f"No {mode} price for this order now",
                details={"reason": "no_price", "mode": mode, "unavailableReason": reason},
            )
        pricing = PreparedPricing(
            mode=mode,
            margin_bps=request.margin_bps,
            assumed_rate_ray=point.rate_ray,
            depth=quoted.fast.depth,
        )
        return self._placement.build(caller, request, point.buy_amount, pricing)

    # --- placing and reading -----------------------------------------------------------

    async def place(
        self, caller: Caller, signed: SignedPlacement
    ) -> tuple[LimitOrder, DerivedStatus]:
        """The order (new or already known) and its live status."""
        order, new = await self._placement.place(caller, signed)
        if new:
            return order, DerivedStatus("ACTIVE", True)  # just checked on chain: nonce unspent
        return order, await self.status_of(order)

    def owned(self, caller: Caller, order_id: str) -> LimitOrder:
        """Partner-scoped: an unknown id and another partner's order are the same 404."""
        order = self.store.orders.get(order_id)
        if order is None or caller.partner_id is None or order.partner_id != caller.partner_id:
            raise NotFound("No such limit order for this API key's partner")
        return order

    async def status_of(self, order: LimitOrder) -> DerivedStatus:
        (status,) = await self.statuses(order.chain_id, [order])
        return status

    async def statuses(self, chain_id: int, orders: Sequence[LimitOrder]) -> list[DerivedStatus]:
        """Spec 3's derived statuses, reading the nonces that storage cannot answer for."""
        now = self._clock.time()
        unread = [o for o in orders if o.fill is None and not o.superseded and not o.cancelled_at]
        spent: dict[tuple[str, int], bool] | None = {}
        chain = self._venue.chain(chain_id)
        if unread and chain is not None:
            try:
                state = await self._reads.resources(
                    chain_id,
                    chain.contracts.signature_transfer,
                    [],
                    list(dict.fromkeys((o.maker.lower(), o.nonce) for o in unread)),
                )
                spent = dict(state.spent)
                await self._explain_spent(chain_id, [o for o in unread if spent.get(_key(o))])
            except ChainUnreadable:
                spent = None
        return [
            derive_status(o, now, None if spent is None else spent.get(_key(o), False))
            for o in orders
        ]

    async def _explain_spent(self, chain_id: int, orders: Sequence[LimitOrder]) -> None:
        """Spent nonces with no fill known: let the index catch up, then the rest are
        cancelled (provisionally: a later fill still turns them FILLED)."""
        if not orders:
            return
        if any(o.fill is None for o in orders):
            with contextlib.suppress(ChainUnreadable):
                await self._index.catch_up(chain_id)
        seen = self._clock.time()
        for order in orders:
            if order.fill is None and order.cancelled_at is None:
                order.cancelled_at = seen
                self.store.touch()
                self.history.status(order.order_id, "CANCELLED", CANCELLED_CAUSE)

    def of_wallet(self, caller: Caller, chain_id: int, wallet: str, limit: int) -> list[LimitOrder]:
        """The wallet's orders placed through the caller's partner, newest first."""
        require_v1_chain(self._venue, caller, chain_id)
        if caller.partner_id is None:
            return []
        orders = self.store.of_wallet(chain_id, wallet)
        return [o for o in orders if o.partner_id == caller.partner_id][:limit]

    # --- the book ----------------------------------------------------------------------

    async def order_book(
        self,
        caller: Caller,
        *,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        preferred: list[str] | None = None,
        restricted: list[str] | None = None,
    ) -> ExecutableOffers:
        found = await self.executable(
            caller,
            chain_id=chain_id,
            sell_token=sell_token,
            buy_token=buy_token,
            steering=steering_of(preferred, restricted),
        )
        return ExecutableOffers(
            chain_id=chain_id,
            sell=found.sell,
            buy=found.buy,
            block=found.view.block,
            as_of=self._clock.time(),
            offers=found.offers,
        )

    async def executable(
        self,
        caller: Caller,
        *,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        steering: Steering,
        min_rate: int | None = None,
    ) -> Executable:
        """Offers for a taker selling `sell_token` for `buy_token`, checked at a block no older
        than the one current when called."""
        chain = require_v1_chain(self._venue, caller, chain_id)
        sell, buy, corridor = require_pair(chain, sell_token, buy_token)
        view = await self._view(chain_id)
        # Makers selling what the taker receives, for what the taker sells.
        ranked = self.ranked(view, buy.address, sell.address, steering, min_rate)
        return Executable(chain, sell, buy, corridor.timing.fee_bps, view, ranked)

    def ranked(
        self,
        view: BookChainView,
        sell_token: str,
        buy_token: str,
        steering: Steering = book.NO_STEERING,
        min_rate: int | None = None,
    ) -> list[LimitOrder]:
        """book.offers for the orders selling `sell_token` for `buy_token`, from a cache that
        holds while the view, the store's epoch and the time (an order's deadline, a hold's
        end) leave the answer unchanged. The list returned is shared: do not change it."""
        key = (view.chain_id, sell_token.lower(), buy_token.lower(), steering, min_rate)
        now = self._clock.time()
        cached = self._offers.get(key)
        if (
            cached is not None
            and cached.view is view
            and cached.epoch == self.store.epoch
            and now < cached.until
        ):
            return cached.offers
        orders = self.store.direction(view.chain_id, sell_token, buy_token)
        ranked = book.offers(
            orders, view, now, steering=steering, min_rate=min_rate, held=self._held(view.chain_id)
        )
        until = min(
            # An order stops being offered the moment its deadline is reached (the ranking is
            # recomputed then), so no swap is built from an order the reactor would refuse.
            [float(o.deadline) for o in orders if o.live_at(now)]
            + [
                hold.until
                for o in orders
                if (hold := self.store.holds.get((view.chain_id, o.order_hash))) is not None
                and hold.until > now
            ],
            default=float("inf"),
        )
        if len(self._offers) > OFFERS_CACHE_SIZE:
            self._offers.clear()
        self._offers[key] = _CachedOffers(view, self.store.epoch, until, ranked)
        return ranked

    async def _view(self, chain_id: int) -> BookChainView:
        try:
            return await self.live.view(chain_id)
        except ChainUnreadable as exc:
            raise chain_unreachable(exc) from exc

    def _held(self, chain_id: int) -> Callable[[bytes], bool]:
        now = self._clock.time()
        return lambda order_hash: self.store.held(chain_id, order_hash, now) is not None

    # --- swaps' reservations -----------------------------------------------------------

    def hold(self, chain_id: int, orders: Sequence[LimitOrder], swap_id: str, until: float) -> None:
        for order in orders:
            self.store.holds[(chain_id, order.order_hash)] = SwapHold(swap_id, until)
        self.store.touch()

    def release(self, chain_id: int, orders: Sequence[LimitOrder], swap_id: str) -> None:
        for order in orders:
            key = (chain_id, order.order_hash)
            hold = self.store.holds.get(key)
            if hold is not None and hold.swap_id == swap_id:
                del self.store.holds[key]
        self.store.touch()

    # --- fills -------------------------------------------------------------------------

    async def on_fill(self, fill: Fill) -> None:
        order = self.store.by_order_hash(fill.chain_id, fill.order_hash)
        if order is None or order.fill is not None:
            return  # not a resting order of ours, or already reconciled
        order.fill = fill
        self.store.touch()
        self.history.step(
            order.order_id,
            "fill",
            fill.taker,
            fill.tx_hash,
            fill.block_number,
            str(fill.input_amount),
            str(fill.output_amount),
            str(fill.fee_amount),
        )
        self.history.status(order.order_id, "FILLED", "its fill seen on chain")
        order.notified.add("limit_order.filled")
        # FILLED supersedes a provisional CANCELLED (and any cancelled/expired notice sent).
        self._events.publish("limit_order.filled", order, self._clock.time())


def _key(order: LimitOrder) -> tuple[str, int]:
    return (order.maker.lower(), order.nonce)
