"""The book's live view of the chain: the makers' spendable funds and the Permit2 nonces of every
resting order, as of the newest block.

"Checked live" (spec 3: an order whose maker spent the funds after posting is never offered)
without a chain read per order per request: every request first reads the chain head with a
read that starts after the request arrived (concurrent requests share such reads), and the view
is re-read in one batch only when the head moved or an order joined the book since. A request
therefore never answers from a block older than the one current when it arrived.

A refresh that finds a nonce spent with no fill known asks the fill index to catch up first, so
an order that has just been filled reads FILLED rather than a provisional CANCELLED."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from simulator.clock import Clock
from simulator.services.limit_orders.history import CANCELLED_CAUSE
from simulator.services.limit_orders.ports import (
    BookChainReader,
    ChainUnreadable,
    FillCatchUp,
    ResourceState,
)
from simulator.services.limit_orders.store import BookStore
from simulator.services.shared.timelines import TimelineSink
from simulator.services.shared.venue import VenueDirectory

MAX_REFRESH_ROUNDS = 3  # orders keep joining under load: answer from the newest view after this


@dataclass(frozen=True)
class BookChainView:
    """What the chain showed for the book at one block (implements book.LiveState)."""

    chain_id: int
    block: int
    version: int  # the store's order version it covers
    state: ResourceState

    def spendable(self, token: str, maker: str) -> int | None:
        return self.state.spendable.get((token.lower(), maker.lower()))

    def spent(self, maker: str, nonce: int) -> bool | None:
        return self.state.spent.get((maker.lower(), nonce))


def _retrieve(task: asyncio.Future[Any]) -> None:
    # A shared read whose waiters all went away must not log "exception never retrieved".
    if not task.cancelled():
        task.exception()


class FreshHeads:
    """Chain head reads that each start after every caller waiting on them arrived: a caller
    joins the read queued behind the one in flight, or starts one when none is."""

    def __init__(self, reads: BookChainReader) -> None:
        self._reads = reads
        self._running: dict[int, asyncio.Future[int]] = {}  # read in flight, per chain
        self._queued: dict[int, asyncio.Future[int]] = {}  # read waiting for it, per chain

    async def fresh(self, chain_id: int) -> int:
        queued = self._queued.get(chain_id)
        if queued is None:
            queued = asyncio.ensure_future(self._read(chain_id, self._running.get(chain_id)))
            queued.add_done_callback(_retrieve)
            self._queued[chain_id] = queued
        return await asyncio.shield(queued)

    async def _read(self, chain_id: int, before: asyncio.Future[int] | None) -> int:
        if before is not None:
            await asyncio.wait([before])
        me = self._queued.pop(chain_id)
        self._running[chain_id] = me
        try:
            return await self._reads.head(chain_id)
        finally:
            if self._running.get(chain_id) is me:
                del self._running[chain_id]


class LiveBook:
    def __init__(
        self,
        clock: Clock,
        store: BookStore,
        venue: VenueDirectory,
        reads: BookChainReader,
        index: FillCatchUp,
        history: TimelineSink,
    ) -> None:
        self._clock = clock
        self._store = store
        self._history = history  # the orders' timelines: a spent nonce cancels one
        self._venue = venue
        self._reads = reads
        self._index = index
        self._heads = FreshHeads(reads)
        self._views: dict[int, BookChainView] = {}  # newest view per chain
        self._refreshing: dict[int, asyncio.Future[BookChainView]] = {}  # refresh in flight

    def forget(self) -> None:
        """Drop every view: the store or the chains were put back (reset, restore), so a view's
        block and version no longer say whether it is current."""
        self._views.clear()

    def latest(self, chain_id: int) -> BookChainView | None:
        """The newest view without reading the chain (may be stale)."""
        return self._views.get(chain_id)

    async def view(self, chain_id: int) -> BookChainView:
        """A view at least as new as the head when called. Raises ChainUnreadable."""
        head = await self._heads.fresh(chain_id)
        view = self._views.get(chain_id)
        for _ in range(MAX_REFRESH_ROUNDS):
            if view is not None and self._current(view, head):
                return view
            refresh = self._refreshing.get(chain_id)
            if refresh is None:
                refresh = asyncio.ensure_future(self._refresh(chain_id))
                refresh.add_done_callback(_retrieve)
                refresh.add_done_callback(lambda done: self._forget(chain_id, done))
                self._refreshing[chain_id] = refresh
            view = await asyncio.shield(refresh)
        assert view is not None
        return view

    def _current(self, view: BookChainView, head: int) -> bool:
        return view.block >= head and view.version == self._store.version(view.chain_id)

    def _forget(self, chain_id: int, done: asyncio.Future[BookChainView]) -> None:
        if self._refreshing.get(chain_id) is done:
            del self._refreshing[chain_id]

    async def _refresh(self, chain_id: int) -> BookChainView:
        chain = self._venue.chain(chain_id)
        if chain is None:
            raise ChainUnreadable(f"chain {chain_id} is not served")
        version = self._store.version(chain_id)
        now = self._clock.time()
        orders = [o for o in self._store.on_chain(chain_id) if o.live_at(now)]
        funding = list(dict.fromkeys((o.sell_token.lower(), o.maker.lower()) for o in orders))
        nonces = list(dict.fromkeys((o.maker.lower(), o.nonce) for o in orders))
        state = await self._reads.resources(
            chain_id, chain.contracts.signature_transfer, funding, nonces
        )
        unexplained = [
            o for o in orders if state.spent.get((o.maker.lower(), o.nonce)) and o.fill is None
        ]
        if unexplained:
            # Permit2's bitmap cannot tell a fill from a cancel: look for the fill first.
            with contextlib.suppress(ChainUnreadable):
                await self._index.catch_up(chain_id)
            seen = self._clock.time()
            for order in unexplained:
                if order.fill is None and order.cancelled_at is None:
                    order.cancelled_at = seen
                    self._store.touch()
                    self._history.status(order.order_id, "CANCELLED", CANCELLED_CAUSE)
        view = BookChainView(chain_id, state.block, version, state)
        newest = self._views.get(chain_id)
        if newest is None or (view.block, view.version) >= (newest.block, newest.version):
            self._views[chain_id] = view
        return view
