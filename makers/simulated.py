"""One simulated maker: a real maker-stream client with a real wallet, prices and failure modes
(`makers.fleet` runs several; see its docstring).

Levels: a full round (every direction of every chain served) runs about every
`publish_interval_s`, and at once after a welcome, a fill or a reconfiguration; a quote or a
released one republishes only the directions whose inventory it changed. The client sends each
direction at most once per `levelsMinIntervalMs` (the newest winning) and skips levels equal to
the last ones sent, except in the full rounds, which refresh them at the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import aiohttp

from makers.book import BookFiller, BookPoster, V1Api
from makers.chain import MakerChain
from makers.chainbook import ChainBook, ChainState
from makers.client import Backoff, MakerClient
from makers.commitments import Commitment
from makers.config import MakerConfig
from makers.failures import RepeatedFailures
from makers.latency import RandomLike, sample_seconds
from makers.levels import LevelsRounds
from makers.maker_stats import MakerStats
from makers.pricing import DEFAULT_USD_TOKENS, PricingModel
from makers.quoting import Quoter, underfunded_factor
from rfqkit.chain_errors import ChainUnreadable
from rfqkit.maker_protocol import (
    Decline,
    ErrorMessage,
    Expired,
    Filled,
    MakerQuote,
    Released,
    Rfq,
    Welcome,
    WelcomeChain,
    WelcomePair,
)

log = logging.getLogger("makers.fleet")

SWEEP_GRACE_MS = 10_000  # a commitment the server never confirmed lapses this long after expiry
LATE_MARGIN_S = 0.05  # how far past the reply budget a `late` maker answers, at least


class SimulatedMaker:
    """One simulated maker (see `makers.fleet`). `api_keys`: one maker credential per
    environment it serves (a live key reaches chain 56, a test key chain 97); `rpc_urls`: chain
    id -> JSON-RPC URL, used unless `chains` gives ready chain access."""

    def __init__(
        self,
        config: MakerConfig,
        *,
        url: str,
        api_keys: Sequence[str],
        rpc_urls: Mapping[int, str] | None = None,
        chains: Mapping[int, MakerChain] | None = None,
        fleet_mids: Mapping[str, Any] | None = None,
        usd_tokens: frozenset[str] = DEFAULT_USD_TOKENS,
        rng: RandomLike | None = None,
        session: aiohttp.ClientSession | None = None,
        publish_interval_s: float = 1.0,
        balance_refresh_s: float = 5.0,
        backoff: Backoff | None = None,
        v1_keys: Mapping[str, str] | None = None,
        v1_session: aiohttp.ClientSession | None = None,
    ) -> None:
        if not api_keys:
            raise ValueError(f"maker {config.name}: needs at least one maker credential")
        self.url = url
        self.api_keys = tuple(api_keys)
        self._fleet_mids = dict(fleet_mids or {})
        self._usd_tokens = usd_tokens
        self._rng: RandomLike = rng or random.Random()  # latency and flaky draws
        self._seed_material = repr(self._rng.random())  # nonce streams derive from it
        self._session = session
        self.publish_interval_s = publish_interval_s
        self.balance_refresh_s = balance_refresh_s
        self._backoff = backoff
        self.config = config
        self.wallet = config.wallet()
        self.pricing = PricingModel(config.pricing_params(self._fleet_mids, usd_tokens))
        self.latency = config.latency_model()
        self.stats = MakerStats()
        self._book = ChainBook(
            config.name,
            self.wallet,
            seed_material=self._seed_material,
            rpc_urls=rpc_urls,
            chains=chains,
        )
        self._quoter = Quoter(self._book)
        self._states = self._book.states  # by chain id
        self.commitments = self._book.commitments  # live quotes by quoteId
        self._clients: list[MakerClient] = []  # one per credential while online
        self._ready = asyncio.Condition()  # notified when a chain becomes ready
        self._rounds = LevelsRounds()  # when to publish which levels
        self._failures = RepeatedFailures(log)  # a chain that fails every round is logged once
        self._publisher: asyncio.Task[None] | None = None
        self._publishing = asyncio.Lock()  # one publishing round at a time (loop or start)
        # The v1 book roles (makers/book.py), with one v1 API key per environment.
        v1_http = v1_session or session
        apis = (
            {env: V1Api(v1_http, url, key) for env, key in (v1_keys or {}).items()}
            if v1_http is not None
            else {}
        )
        self.filler = BookFiller(self, apis)
        self.poster = BookPoster(self, apis, self._rng)
        self._book_tasks: list[asyncio.Task[None]] = []
        self._has_v1 = bool(apis)
        self._online_lock = asyncio.Lock()  # serialises going online/offline
        self._started = False
        self._closed = False

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def connected(self) -> bool:
        return any(c.connected for c in self._clients)

    # ---- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> SimulatedMaker:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self, wait_s: float | None = 30.0) -> int:
        """Start publishing and, if the config says online, connect, wait until every chain it
        serves is ready (approved, balances read) and the server has read its levels there, and
        run the first round of its v1 book roles (its resting orders placed). Returns how many
        resting orders that round placed."""
        if self._closed:
            raise RuntimeError(f"maker {self.name} is closed")
        if self._started:
            return 0
        self._started = True
        self._publisher = asyncio.create_task(self._publish_loop(), name=f"{self.name}:levels")
        placed = 0
        if self.config.online:
            await self._go_online(wait_s)
            await self._levels_at_server(wait_s)
            placed = await self.poster.round()
        if self._has_v1:
            self._book_tasks = [
                asyncio.create_task(self.filler.run(), name=f"{self.name}:book-filler"),
                asyncio.create_task(self.poster.run(), name=f"{self.name}:book-poster"),
            ]
        return placed

    async def _levels_at_server(self, wait_s: float | None) -> None:
        """A full publishing round now, then a sync on every connection: when this returns, the
        server has read levels for every direction this maker publishes (the round hands each
        one to the client, and a direction's first levels on a connection leave at once)."""
        async with asyncio.timeout(wait_s):
            async with self._publishing:
                await self._tick(True, set())
            await asyncio.gather(*(c.sync(None) for c in self._clients if c.connected))

    async def close(self) -> None:
        """Disconnect, cancel and await every task, close the chain access it owns."""
        self._closed = True
        for task in [*self._book_tasks, *([self._publisher] if self._publisher else [])]:
            task.cancel()
        for task in [*self._book_tasks, *([self._publisher] if self._publisher else [])]:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._publisher = None
        self._book_tasks = []
        await self._go_offline()
        await self._book.close()

    async def _go_online(self, wait_s: float | None) -> None:
        async with self._online_lock:
            if self._clients:
                return
            clients = [self._make_client(key, index) for index, key in enumerate(self.api_keys)]
            self._clients = clients
            results = await asyncio.gather(
                *(c.start(wait_s) for c in clients), return_exceptions=True
            )
            failure = next((r for r in results if isinstance(r, BaseException)), None)
            if failure is not None:
                await asyncio.gather(*(c.close() for c in clients))
                self._clients = []
                raise failure
        self._wake_all()
        await self.wait_ready(wait_s)

    async def _go_offline(self) -> None:
        async with self._online_lock:
            clients, self._clients = self._clients, []
            await asyncio.gather(*(c.close() for c in clients))
            for state in self._states.values():
                state.ready = False  # re-checked at the next welcome

    def _make_client(self, key: str, index: int) -> MakerClient:
        return MakerClient(
            self.url,
            key,
            on_rfq=self._on_rfq,
            on_welcome=self._on_welcome,
            on_filled=self._on_filled,
            on_expired=self._on_expired,
            on_released=self._on_released,
            on_error=self._on_error,
            session=self._session,
            backoff=self._backoff,
            rng=random.Random(f"{self._seed_material}:{self.name}:backoff:{index}"),
            name=f"{self.name}#{index}",
        )

    def _served(self, client: MakerClient) -> list[WelcomeChain]:
        welcome = client.welcome
        if welcome is None:
            return []
        return [c for c in welcome.chains if c.chain_id in self.config.chains]

    def _is_ready(self) -> bool:
        for client in self._clients:
            for info in self._served(client):
                state = self._states.get(info.chain_id)
                if state is None or not state.ready or state.client is not client:
                    return False
        return True

    async def wait_ready(self, wait_s: float | None = 30.0) -> None:
        """Until every chain served by a live connection is prepared."""
        async with asyncio.timeout(wait_s), self._ready:
            await self._ready.wait_for(self._is_ready)

    # ---- live changes -----------------------------------------------------------------------

    async def reconfigure(self, **changes: Any) -> MakerConfig:
        """Change behaviour, latency, spread_bps, impact, mids, max_inventory_fraction, …, or
        online (False disconnects, True reconnects and waits until ready; if that fails the
        maker stays offline and the error is raised). The wallet and name cannot change;
        invalid values raise ValueError (pydantic's ValidationError)."""
        fixed = {"name", "wallet_index", "private_key"} & changes.keys()
        if fixed:
            raise ValueError(f"maker {self.name}: {', '.join(sorted(fixed))} cannot change")
        config = MakerConfig.model_validate({**self.config.model_dump(), **changes})
        pricing = PricingModel(config.pricing_params(self._fleet_mids, self._usd_tokens))
        was_online = self.config.online
        self.config, self.pricing, self.latency = config, pricing, config.latency_model()
        if self._started and not self._closed and config.online != was_online:
            if config.online:
                try:
                    await self._go_online(30.0)
                except BaseException:
                    # Could not connect (refused key, server gone): report it and stay offline.
                    self.config = config = config.model_copy(update={"online": False})
                    await self._go_offline()
                    raise
            else:
                await self._go_offline()
        self._wake_all()
        return config

    def status(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "wallet": self.wallet.address,
            "behaviour": self.config.behaviour,
            "online": self.config.online,
            "connected": self.connected,
            "chains": sorted(c for c, s in self._states.items() if s.ready),
            "live_quotes": len(self.commitments),
            # failing: what fails every publishing round right now (e.g. "chain 97": a node
            # that is down), with how many rounds in a row; empty when all is well.
            "stats": {
                **self.stats.as_dict(),
                "failing": self._failures.failing(),
                "book_fills": self.filler.fills,
                "book_orders_placed": self.poster.placed,
            },
        }

    # ---- the v1 book roles' seat (makers/book.py BookSeat) ----------------------------------

    def ready_states(self) -> list[ChainState]:
        served = {info.chain_id for c in self._clients if c.connected for info in self._served(c)}
        return [s for c, s in self._states.items() if c in served and s.ready]

    def chain_access(self, chain_id: int) -> MakerChain | None:
        return self._book.chain(chain_id)

    async def refresh_balances(self, chain_id: int) -> None:
        state = self._states.get(chain_id)
        if state is not None:
            await self._book.refresh_balances(state)
            self._rounds.changed()

    # ---- inventory --------------------------------------------------------------------------

    def committed(self, chain_id: int, token: str) -> int:
        return self._book.committed(chain_id, token)

    def inventory(self, chain_id: int, token: str) -> int:
        """What the maker may give of `token` now: balance less live commitments (the
        `underfunded` behaviour pretends to hold `underfunded_factor` times its balance)."""
        return self._book.inventory(chain_id, token, underfunded_factor(self.config))

    async def _prepare(self, client: MakerClient, info: WelcomeChain) -> None:
        await self._book.prepare(client, info)
        async with self._ready:
            self._ready.notify_all()

    # ---- levels -----------------------------------------------------------------------------

    def _wake_all(self) -> None:
        self._rounds.everything()

    def _wake_for(self, commitment: Commitment | None) -> None:
        if commitment is None:
            self._rounds.changed()
        else:
            self._rounds.changed(commitment.chain_id, commitment.token)

    async def _publish_loop(self) -> None:
        while True:
            full, dirty = await self._rounds.next(self.publish_interval_s)
            try:
                async with self._publishing:
                    await self._tick(full, dirty)
            except Exception as exc:  # the loop must outlive one bad tick
                self._failures.failed("tick", f"{self.name}: publishing levels", exc)
            else:
                self._failures.succeeded("tick", f"{self.name}: publishing levels")

    async def _tick(self, full: bool, dirty: set[tuple[int, str]]) -> None:
        """One round: `full` publishes every direction (refreshing unchanged levels at the
        server), otherwise only those giving a token in `dirty` (and only if they changed). A
        chain that fails (its node is down) does not hold back the others."""
        for client in list(self._clients):
            if not client.connected:
                continue
            for lapsed in self.commitments.sweep(client.server_time_ms(), SWEEP_GRACE_MS):
                dirty.add((lapsed.chain_id, lapsed.token))
            for info in self._served(client):
                what = f"{self.name}: publishing levels on chain {info.chain_id}"
                try:
                    await self._publish_chain(client, info, full, dirty)
                except Exception as exc:
                    # A node that is down says so in the message; anything else keeps its trace.
                    expected = isinstance(exc, ChainUnreadable | aiohttp.ClientError | OSError)
                    self._failures.failed(f"chain {info.chain_id}", what, exc, trace=not expected)
                else:
                    self._failures.succeeded(f"chain {info.chain_id}", what)

    async def _publish_chain(
        self, client: MakerClient, info: WelcomeChain, full: bool, dirty: set[tuple[int, str]]
    ) -> None:
        chain_id = info.chain_id
        state = self._states.get(chain_id)
        every = full
        if state is None or not state.ready or state.client is not client:
            await self._prepare(client, info)
            state = self._states.get(chain_id)
            if state is None or not state.ready:
                return
            every = True
        elif state.info is not info:
            state.info = info
        loop_time = asyncio.get_running_loop().time()
        if loop_time - state.balances_at >= self.balance_refresh_s:
            await self._book.refresh_balances(state)
            every = True
        # A filling operator's levels on BOOK corridors are its standing bid there.
        pairs = [*info.pairs, *(info.book_pairs if self.config.fills_book else [])]
        for pair in pairs:
            if every or (chain_id, pair.buy_token.lower()) in dirty:
                await client.publish_levels(
                    chain_id,
                    pair.sell_token,
                    pair.buy_token,
                    self._levels(state, pair),
                    resend_after_s=0.0 if every else self.publish_interval_s,
                )

    def chain_restarted(self, chain_id: int) -> None:
        """The chain's node was replaced (a fresh chain at the same URL): approve and read
        balances again before quoting on it."""
        state = self._states.get(chain_id)
        if state is not None:
            state.ready = False
        self._wake_all()

    def _levels(self, state: ChainState, pair: WelcomePair) -> list[tuple[int, int]]:
        sell = state.tokens.get(pair.sell_token.lower())
        buy = state.tokens.get(pair.buy_token.lower())
        if sell is None or buy is None:
            return []
        return self.pricing.levels(sell, buy, self.inventory(state.info.chain_id, pair.buy_token))

    # ---- rfqs -------------------------------------------------------------------------------

    async def _on_welcome(self, welcome: Welcome) -> None:
        self._wake_all()  # the publish loop prepares new chains and republishes

    async def _on_rfq(self, rfq: Rfq) -> MakerQuote | Decline | None:
        loop = asyncio.get_running_loop()
        received = loop.time()
        self.stats.rfqs += 1
        behaviour = self.config.behaviour
        delay = sample_seconds(self.latency, self._rng)
        if behaviour == "silent":
            self.stats.silent += 1
            return None
        reply = self._reply(rfq)
        if behaviour == "late":
            state = self._states.get(rfq.chain_id)
            pair = None if state is None else state.info.pair(rfq.sell_token, rfq.buy_token)
            if pair is not None:
                # The rfq left the server at or after the request; a full budget after we got
                # it is surely past replyByMs, whatever the clocks say.
                delay += pair.reply_budget_ms / 1000 + LATE_MARGIN_S
            else:
                remaining_ms = rfq.reply_by_ms - self._server_time(rfq.chain_id)
                delay += max(0.0, remaining_ms / 1000) + LATE_MARGIN_S
        try:
            await asyncio.sleep(max(0.0, delay - (loop.time() - received)))
        except asyncio.CancelledError:
            self.commitments.pop(rfq.quote_id, None)  # never sent: holds nothing
            raise
        if isinstance(reply, MakerQuote):
            self.stats.quotes += 1
            self._wake_for(self.commitments.get(rfq.quote_id))
        else:
            self.stats.declines[reply.reason] += 1
        return reply

    def _server_time(self, chain_id: int) -> int:
        state = self._states.get(chain_id)
        if state is not None:
            return state.client.server_time_ms()
        return self._clients[0].server_time_ms() if self._clients else 0

    def _reply(self, rfq: Rfq) -> MakerQuote | Decline:
        return self._quoter.reply(rfq, self.config, self.pricing, self._rng)

    # ---- notifications ----------------------------------------------------------------------

    async def _on_filled(self, message: Filled) -> None:
        self.stats.filled += 1
        state = self._states.get(message.chain_id)
        if state is not None:
            # Read the new balances before letting go of the commitment, so the inventory is
            # never counted twice (old balance and no commitment).
            await self._book.refresh_balances(state)
        self.commitments.pop(message.quote_id, None)
        self._wake_all()

    async def _on_expired(self, message: Expired) -> None:
        self.stats.expired += 1
        self._wake_for(self.commitments.pop(message.quote_id, None))

    async def _on_released(self, message: Released) -> None:
        self.stats.released[message.reason] += 1
        if message.reason == "invalid":
            log.info("%s: quote %s invalid: %s", self.name, message.quote_id, message.detail)
        self._wake_for(self.commitments.pop(message.quote_id, None))

    async def _on_error(self, message: ErrorMessage) -> None:
        self.stats.errors[message.code] += 1
