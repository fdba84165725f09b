"""Instant swaps (spec 3 "POST /v1/swaps", "GET /v1/quote", the swap endpoints): whole resting
orders of the book, best rate first, at or above minRate, composed up to sellAmount; the swap's
record, its live status and its settlement from the fill index."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from simulator.clock import Clock
from simulator.errors import Conflict, InvalidRequest, NotFound
from simulator.randomness import RandomSource
from simulator.services.access.callers import Caller
from simulator.services.limit_orders.book import Composition, capacity, compose
from simulator.services.limit_orders.live import BookChainView
from simulator.services.limit_orders.model import LimitOrder
from simulator.services.limit_orders.ports import ChainUnreadable
from simulator.services.limit_orders.service import BookService, Executable, steering_of
from simulator.services.shared.amounts import rate_ray
from simulator.services.shared.fills import Fill
from simulator.services.shared.timelines import TimelineSink
from simulator.services.swaps.events import SwapEvents
from simulator.services.swaps.model import CancelReason, NotFillable, SwapRecord, SwapStatus
from simulator.services.swaps.store import SwapStore
from simulator.settings import BookSettings


@dataclass(frozen=True)
class SwapRequest:
    chain_id: int
    sell_token: str
    buy_token: str
    sell_amount: int
    taker: str | None  # POST /v1/swaps requires it; GET /v1/quote has none
    min_rate: int | None
    require_full_fill: bool
    preferred: list[str] | None
    restricted: list[str] | None


@dataclass(frozen=True)
class SwapQuoteResult:
    """GET /v1/quote: what a swap would compose now (nothing is reserved), under the wire's
    names (api/swaps/schemas.py `SwapQuote` is validated from it)."""

    chain_id: int
    sell_token: str
    buy_token: str
    sell_amount: int  # as requested
    fillable: bool
    reason: Literal["no_liquidity"] | None
    sold_amount: int  # what the composed orders take, fee included
    buy_amount: int
    fee_amount: int
    rate_ray: int  # buyAmount per soldAmount
    partial_fill: bool  # soldAmount is below sellAmount
    allowance_target: str  # the reactor: approve it for soldAmount
    orders: tuple[LimitOrder, ...]
    block_number: int

    @classmethod
    def of(cls, found: Executable, sell_amount: int, composition: Composition) -> SwapQuoteResult:
        fillable = bool(composition.orders)
        return cls(
            chain_id=found.chain.chain_id,
            sell_token=found.sell.address,
            buy_token=found.buy.address,
            sell_amount=sell_amount,
            fillable=fillable,
            reason=None if fillable else "no_liquidity",
            sold_amount=composition.sold,
            buy_amount=composition.proceeds,
            fee_amount=composition.fee,
            rate_ray=rate_ray(
                composition.sold, found.sell.decimals, composition.proceeds, found.buy.decimals
            ),
            partial_fill=fillable and composition.sold < sell_amount,
            allowance_target=found.chain.contracts.reactor,
            orders=composition.orders,
            block_number=found.view.block,
        )


@dataclass(frozen=True)
class Page:
    swaps: list[SwapRecord]
    next_cursor: str | None


def encode_cursor(sequence: int) -> str:
    return base64.urlsafe_b64encode(f"swaps:{sequence}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, number = raw.partition(":")
        if prefix != "swaps" or not number.isdigit():
            raise ValueError(raw)
        return int(number)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise InvalidRequest(
            "cursor is not one this service returned", details={"reason": "invalid_cursor"}
        ) from None


class SwapService:
    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        book: BookService,
        store: SwapStore,
        events: SwapEvents,
        settings: BookSettings,
        history: TimelineSink,
    ) -> None:
        self._clock = clock
        self._random = random
        self._book = book
        self.store = store
        self._events = events
        self._settings = settings
        self._history = history  # every swap's timeline (GET /_sim/swaps)

    async def _compose(
        self, caller: Caller, request: SwapRequest
    ) -> tuple[Executable, Composition]:
        if request.sell_amount <= 0:
            raise InvalidRequest.for_field("sellAmount", "must be greater than zero")
        found = await self._book.executable(
            caller,
            chain_id=request.chain_id,
            sell_token=request.sell_token,
            buy_token=request.buy_token,
            steering=steering_of(request.preferred, request.restricted),
            min_rate=request.min_rate,
        )
        return found, Composition(tuple(compose(found.offers, request.sell_amount)))

    async def quote(self, caller: Caller, request: SwapRequest) -> SwapQuoteResult:
        found, composition = await self._compose(caller, request)
        return SwapQuoteResult.of(found, request.sell_amount, composition)

    async def create(self, caller: Caller, request: SwapRequest) -> SwapRecord | NotFillable:
        assert request.taker is not None
        found, composition = await self._compose(caller, request)
        available_sell, available_buy = capacity(composition.orders)
        if not composition.orders:
            return NotFillable("no_liquidity", request.sell_amount, 0, 0)
        if request.require_full_fill and composition.sold != request.sell_amount:
            return NotFillable("partial_fill", request.sell_amount, available_sell, available_buy)
        now = self._clock.time()
        expires_at = min(
            min(o.deadline for o in composition.orders), now + self._settings.swap_ttl_s
        )
        # No await since the offers were checked: the holds are taken before anyone else runs.
        record = SwapRecord(
            swap_id=self._random.new_id("sw"),
            chain_id=found.chain.chain_id,
            partner_id=caller.partner_id,
            sequence=self.store.next_sequence(),
            sell_token=found.sell.address,
            buy_token=found.buy.address,
            sell_decimals=found.sell.decimals,
            buy_decimals=found.buy.decimals,
            taker=request.taker,
            sell_amount=request.sell_amount,
            min_rate=request.min_rate,
            require_full_fill=request.require_full_fill,
            reactor=found.chain.contracts.reactor,
            orders=composition.orders,
            created_at=now,
            expires_at=expires_at,
        )
        self.store.add(record)
        self._book.hold(record.chain_id, record.orders, record.swap_id, expires_at)
        for order in record.orders:
            self._book.history.step(
                order.order_id, "held", record.swap_id, record.taker, expires_at
            )
        self._history.start(
            record.swap_id,
            record.status,
            {
                "chain_id": record.chain_id,
                "sell_token": record.sell_token,
                "buy_token": record.buy_token,
                "sell_amount": str(record.sell_amount),  # as requested
                "sold_amount": str(record.sold),  # what its orders take, fee included
                "buy_amount": str(record.proceeds),  # what the taker receives
                "taker": record.taker,
                "makers": list(dict.fromkeys(o.maker for o in record.orders)),
                "expires_at": expires_at,
            },
        )
        self._history.step(
            record.swap_id,
            "built",
            caller.identity,
            record.taker,
            [[o.order_id, o.maker] for o in record.orders],
            str(record.sold),
            str(record.proceeds),
            expires_at,
        )
        return record

    # --- reading -----------------------------------------------------------------------

    def _owned(self, caller: Caller, swap_id: str) -> SwapRecord:
        record = self.store.records.get(swap_id)
        if record is None or caller.partner_id is None or record.partner_id != caller.partner_id:
            raise NotFound("No such swap for this API key's partner")
        return record

    async def get(self, caller: Caller, swap_id: str) -> SwapRecord:
        record = self._owned(caller, swap_id)
        await self._refresh([record])
        return record

    async def page(
        self, caller: Caller, *, status: SwapStatus | None, cursor: str | None, limit: int
    ) -> Page:
        before = decode_cursor(cursor) if cursor is not None else None
        if caller.partner_id is None:
            return Page([], None)
        records = self.store.of_partner(caller.partner_id)
        await self._refresh(records)
        if before is not None:
            records = [r for r in records if r.sequence < before]
        if status is not None:
            records = [r for r in records if r.status == status]
        shown = records[:limit]
        more = len(records) > limit
        return Page(shown, encode_cursor(shown[-1].sequence) if more and shown else None)

    async def _refresh(self, records: Sequence[SwapRecord]) -> None:
        """Apply the time- and chain-driven transitions due now (module docstring of model)."""
        now = self._clock.time()
        views: dict[int, BookChainView | None] = {}
        for record in records:
            if record.open and now >= record.expires_at:
                self._close(record, "EXPIRED", "expiresAt passed unfilled")
        for record in records:
            if record.status != "QUOTED":
                continue
            if record.chain_id not in views:
                try:
                    views[record.chain_id] = await self._book.live.view(record.chain_id)
                except ChainUnreadable:
                    views[record.chain_id] = None
            view = views[record.chain_id]
            reason = _unfillable(record, view) if record.status == "QUOTED" else None
            if reason is not None:
                record.cancel_reason = reason
                self._close(record, "CANCELLED", reason)

    def _close(self, record: SwapRecord, status: SwapStatus, cause: str) -> None:
        record.status = status
        self._book.release(record.chain_id, record.orders, record.swap_id)
        self._history.status(record.swap_id, status, cause)

    async def submit(self, caller: Caller, swap_id: str, tx_hash: str) -> SwapRecord:
        record = self._owned(caller, swap_id)
        tx_hash = tx_hash.lower()
        if record.tx_hash is not None:
            if record.tx_hash == tx_hash:
                return record  # idempotent on the same hash, whatever the status is now
            raise Conflict(
                "A different transaction hash was already reported for this swap",
                details={"reason": "tx_hash_mismatch"},
            )
        await self._refresh([record])
        if record.status != "QUOTED":
            raise Conflict(
                f"Submit is accepted only on a QUOTED swap before expiresAt; this one is "
                f"{record.status}",
                details={"reason": "not_submittable", "status": record.status},
            )
        record.tx_hash = tx_hash
        record.submitted_at = self._clock.time()
        record.status = "SUBMITTED"
        self._history.step(record.swap_id, "submitted", tx_hash)
        self._history.status(record.swap_id, "SUBMITTED", "the taker reported its transaction")
        return record

    # --- settlement --------------------------------------------------------------------

    async def on_fill(self, fill: Fill) -> None:
        including = self.store.including(fill.chain_id, fill.order_hash)
        if not including:
            return
        taker = fill.taker.lower()
        mine = [r for r in including if r.taker.lower() == taker and r.status != "FILLED"]
        chosen = _settling(mine, fill.tx_hash)
        for record in including:
            if record is not chosen and record.status == "QUOTED":
                record.cancel_reason = "order_filled_elsewhere"
                self._close(record, "CANCELLED", "order_filled_elsewhere")
        if chosen is None:
            return
        chosen.fills[fill.order_hash] = fill
        self._history.step(
            chosen.swap_id,
            "fill",
            fill.maker,
            next((o.order_id for o in chosen.orders if o.order_hash == fill.order_hash), None),
            fill.tx_hash,
            fill.block_number,
            str(fill.input_amount),
            str(fill.output_amount),
            str(fill.fee_amount),
        )
        if len(chosen.fills) < len(chosen.orders):
            return  # one batch settles every order: its other Fill logs are on their way
        chosen.tx_hash = fill.tx_hash
        chosen.filled_at = max(f.block_time for f in chosen.fills.values())
        chosen.cancel_reason = None
        self._close(chosen, "FILLED", "every order's fill seen on chain")
        self._events.publish("swap.filled", chosen, self._clock.time())


def _settling(candidates: Sequence[SwapRecord], tx_hash: str) -> SwapRecord | None:
    """The swap a fill by its taker settles: the one that reported this transaction, else the
    newest open one, else the newest."""
    for record in candidates:
        if record.tx_hash == tx_hash:
            return record
    open_ = [r for r in candidates if r.open]
    pool = open_ or list(candidates)
    return max(pool, key=lambda r: r.sequence) if pool else None


def _unfillable(record: SwapRecord, view: BookChainView | None) -> CancelReason | None:
    used: dict[tuple[str, str], int] = {}
    for order in record.orders:
        if order.fill is not None:
            if order.fill.taker.lower() != record.taker.lower():
                return "order_filled_elsewhere"
            continue
        if order.superseded or order.cancelled_at is not None:
            return "order_cancelled"
        if view is None:
            continue
        if view.spent(order.maker, order.nonce):
            return "order_cancelled"
        available = view.spendable(order.sell_token, order.maker)
        if available is None:
            continue
        key = (order.sell_token.lower(), order.maker.lower())
        used[key] = used.get(key, 0) + order.sell_amount
        if used[key] > available:
            return "maker_unfunded"
    return None
