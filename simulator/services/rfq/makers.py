"""Makers online on the maker stream: their sessions, their published levels, and the firm
requests in flight to them. The stream adapter (adapters/rfq/maker_stream.py) feeds it with
parsed messages; the auction and the ladder read it."""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from contracts.orders import RfqOrder
from rfqkit.maker_protocol import Rfq, ServerMessage
from simulator.clock import Clock
from simulator.services.rfq.ports import MakerGateway
from simulator.services.shared.amounts import Curve
from simulator.settings import ChainEnvironment

LEVELS_MAX_AGE_S = 10.0  # levels older than this are treated as withdrawn
LEVELS_MIN_INTERVAL_MS = 400  # advertised publishing cadence (faster updates simply replace)
UNANSWERED_KEPT = 4_096  # requests whose budget ran out, remembered so a late answer is named


@dataclass(frozen=True)
class QuoteReply:
    """A maker's `quote`: its signed order, not yet checked against the request."""

    order: RfqOrder
    signature: bytes
    expires_at_ms: int  # the maker's accept cutoff


@dataclass(frozen=True)
class DeclineReply:
    """A maker's `decline`."""

    reason: str  # liquidity, min_size, rejected or unavailable
    max_sell_amount: int | None  # with liquidity: the taker-side size it could do


@dataclass(frozen=True)
class MalformedReply:
    """An answer to a request in flight that did not parse as a quote or decline: it ends the
    request like an invalid order (the maker is told why), rather than leaving it waiting."""

    detail: str


MakerReply = QuoteReply | DeclineReply | MalformedReply

PairKey = tuple[int, str, str]  # (chain id, sell token lowercase, buy token lowercase)
# Told of an answer to a request whose wait had already ended: (maker, quote id, rfq id,
# seconds from the request to the answer, the answer's kind: quote, decline or malformed).
LateListener = Callable[["OnlineMaker", str, str, float, str], None]


@dataclass
class OnlineMaker:
    maker_id: str  # the credential's public prefix
    wallet: str  # funding wallet, checksummed
    environment: ChainEnvironment  # live or test: which chains it serves
    gateway: MakerGateway  # how messages reach it
    connected_at: float
    fills_book: bool = False  # its credential carries maker:fill: its levels are fastFill bids
    levels: dict[PairKey, tuple[Curve, float]] = field(default_factory=dict)  # curve, published at
    pending: dict[str, asyncio.Future[MakerReply]] = field(default_factory=dict)  # by quote id

    @property
    def wallet_key(self) -> str:
        return self.wallet.lower()

    @property
    def session_key(self) -> str:
        """One session per wallet and environment (a maker serving live and test chains holds
        one credential, and one connection, for each)."""
        return f"{self.wallet_key}:{self.environment}"


class MakerRegistry:
    def __init__(self, clock: Clock, *, levels_max_age_s: float = LEVELS_MAX_AGE_S) -> None:
        self._clock = clock
        self.levels_max_age_s = levels_max_age_s
        self.online: dict[str, OnlineMaker] = {}  # by session key: wallet + environment
        # Requests whose wait timed out, by quote id: (rfq id, monotonic time sent), oldest
        # first; a late answer to one is reported to `on_late` (the RFQ's timeline).
        self.unanswered: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self.on_late: LateListener | None = None

    def connect(self, maker: OnlineMaker) -> OnlineMaker | None:
        """Register a session; returns the session it replaces (the caller closes it)."""
        previous = self.online.get(maker.session_key)
        self.online[maker.session_key] = maker
        if previous is not None:
            self._abandon(previous)
        return previous

    def disconnect(self, maker: OnlineMaker) -> None:
        """Offline at once: levels dropped, unanswered requests count as no reply."""
        if self.online.get(maker.session_key) is maker:
            del self.online[maker.session_key]
        self._abandon(maker)

    def _abandon(self, maker: OnlineMaker) -> None:
        maker.levels.clear()
        for future in maker.pending.values():
            if not future.done():
                future.cancel()
        maker.pending.clear()

    def makers_for(self, environment: str) -> list[OnlineMaker]:
        return [m for m in self.online.values() if m.environment == environment]

    def set_levels(self, maker: OnlineMaker, key: PairKey, curve: Curve) -> None:
        if curve:
            maker.levels[key] = (curve, self._clock.time())
        else:
            maker.levels.pop(key, None)

    def fresh_curve(self, maker: OnlineMaker, key: PairKey) -> Curve | None:
        entry = maker.levels.get(key)
        if entry is None:
            return None
        curve, published_at = entry
        if self._clock.time() - published_at > self.levels_max_age_s:
            return None
        return curve

    def filler_curves(self, environment: str, key: PairKey) -> list[tuple[str, Curve]]:
        """(wallet, fresh levels) of the online makers that fill resting orders (maker:fill) in
        one direction: the bids v1's fastFill crosses."""
        out = []
        for maker in self.makers_for(environment):
            if maker.fills_book and (curve := self.fresh_curve(maker, key)):
                out.append((maker.wallet, curve))
        return out

    async def ask(self, maker: OnlineMaker, message: Rfq, timeout_s: float) -> MakerReply | None:
        """Send a firm request and wait for its answer (quote or decline) up to `timeout_s`;
        None when the maker stays silent, answers late or disconnects."""
        quote_id = message.quote_id
        future: asyncio.Future[MakerReply] = asyncio.get_running_loop().create_future()
        maker.pending[quote_id] = future
        sent_at = self._clock.monotonic()
        try:
            try:
                await maker.gateway.send(message)
            except (ConnectionError, RuntimeError):
                return None  # the socket closed under us: no reply
            done, _ = await asyncio.wait({future}, timeout=max(0.0, timeout_s))
            if future in done and not future.cancelled():
                return future.result()
            if not future.done():  # timed out (a cancelled future: disconnected)
                self.unanswered[quote_id] = (message.rfq_id, sent_at)
                if len(self.unanswered) > UNANSWERED_KEPT:
                    self.unanswered.popitem(last=False)
            return None  # silent, late, or disconnected (its future was cancelled)
        finally:
            maker.pending.pop(quote_id, None)
            if not future.done():
                future.cancel()

    def deliver(self, maker: OnlineMaker, quote_id: str, reply: MakerReply) -> bool:
        """An answer to `quote_id` arrived; False when nobody waits for it (unknown or late)."""
        future = maker.pending.get(quote_id)
        if future is None or future.done():
            late = self.unanswered.pop(quote_id, None)
            if late is not None and self.on_late is not None:
                rfq_id, sent_at = late
                kind = type(reply).__name__.removesuffix("Reply").lower()
                self.on_late(maker, quote_id, rfq_id, self._clock.monotonic() - sent_at, kind)
            return False
        future.set_result(reply)
        return True

    async def notify(self, wallet: str, environment: str, message: ServerMessage) -> None:
        """Best effort: a maker that is offline simply misses the notification."""
        maker = self.online.get(f"{wallet.lower()}:{environment}")
        if maker is not None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await maker.gateway.send(message)
