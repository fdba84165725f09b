"""Simulated makers: real maker-stream clients with real wallets, prices and failure modes.

A `SimulatedMaker` holds one funding wallet. For every chain it serves it makes sure the
chain's signature-transfer contract (from `welcome`) may spend every token it gives (a max
approval; a nonzero allowance is reset to 0 first, as USDT-like tokens demand), reads its real
balances, publishes levels about every second (and right after a fill), answers rfqs after a
latency drawn from its distribution, signs real orders (`contracts.orders.sign_order`) with
unique Permit2 nonces, and tracks what its live quotes hold from its own quotes and the
`filled`/`expired`/`released` notifications. Its `behaviour` selects a failure mode.

`MakerFleet` runs several of them over one HTTP session and one chain connection per chain,
with live reconfiguration (behaviour, latency, prices, online/offline) and clean shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import aiohttp
from eth_utils.crypto import keccak

from contracts.orders import RfqOrder, sign_order
from makers.chain import MakerChain, Web3MakerChain, ensure_max_allowance
from makers.client import Backoff, MakerClient
from makers.config import FleetConfig, MakerConfig
from makers.latency import RandomLike, sample_seconds
from makers.pricing import DEFAULT_USD_TOKENS, PricingModel, TokenSpec
from makers.protocol import (
    ChainInfo,
    Decline,
    DeclineReason,
    ErrorMessage,
    Expired,
    Filled,
    PairInfo,
    Quote,
    QuoteOrder,
    Released,
    Rfq,
    Welcome,
)

log = logging.getLogger(__name__)

NONCE_BITS = 248
SWEEP_GRACE_MS = 10_000  # a commitment the server never confirmed lapses this long after expiry
LATE_MARGIN_S = 0.05  # how far past the reply budget a `late` maker answers, at least


@dataclass(frozen=True)
class Commitment:
    """Inventory a live quote holds: `amount` of `token` (what the order gives) until the quote
    fills, lapses or is released."""

    chain_id: int
    token: str  # lower-case address
    amount: int
    expires_at_ms: int  # server time
    nonce: int


@dataclass
class MakerStats:
    rfqs: int = 0
    quotes: int = 0
    declines: Counter[str] = field(default_factory=Counter)
    silent: int = 0
    filled: int = 0
    expired: int = 0
    released: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rfqs": self.rfqs,
            "quotes": self.quotes,
            "declines": dict(self.declines),
            "silent": self.silent,
            "filled": self.filled,
            "expired": self.expired,
            "released": dict(self.released),
            "errors": dict(self.errors),
        }


@dataclass
class _ChainState:
    """What the maker knows about one chain it serves."""

    info: ChainInfo  # from the latest welcome naming this chain
    client: MakerClient  # the connection (credential) that serves it
    tokens: dict[str, TokenSpec]  # by lower-case address: symbol and decimals
    balances: dict[str, int] = field(default_factory=dict)  # given tokens, by lower-case address
    balances_epoch: int = 0  # sequence number of the refresh the balances came from
    balances_at: float = float("-inf")  # loop time of that refresh
    nonces: random.Random | None = None  # this chain's nonce stream (set once)
    used_nonces: set[int] = field(default_factory=set)  # never signed twice in this process
    ready: bool = False  # approvals checked and balances read


class SimulatedMaker:
    """One simulated maker (see the module docstring). `api_keys`: one maker credential per
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
    ) -> None:
        if not api_keys:
            raise ValueError(f"maker {config.name}: needs at least one maker credential")
        self.url = url
        self.api_keys = tuple(api_keys)
        self._rpc_urls = dict(rpc_urls or {})
        self._shared_chains = dict(chains or {})  # owned by the caller
        self._own_chains: dict[int, MakerChain] = {}  # made here from rpc_urls, closed here
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
        self._wrong_key = "0x" + keccak(text=f"rfqsim:bad-signature:{config.name}").hex()
        self.pricing = PricingModel(config.pricing_params(self._fleet_mids, usd_tokens))
        self.latency = config.latency_model()
        self.stats = MakerStats()
        self.commitments: dict[str, Commitment] = {}  # live quotes by quoteId
        self._clients: list[MakerClient] = []  # one per credential while online
        self._states: dict[int, _ChainState] = {}  # by chain id
        self._symbols: dict[tuple[int, str], str] = {}  # (chain, lower token) -> symbol
        self._prepare_lock = asyncio.Lock()  # one prepare (approvals, balances) at a time
        self._ready = asyncio.Condition()  # notified when a chain becomes ready
        self._wake = asyncio.Event()  # publish now (a fill, a welcome, a reconfiguration)
        self._epochs = itertools.count(1)  # orders balance refreshes
        self._publisher: asyncio.Task[None] | None = None
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

    async def start(self, wait_s: float | None = 30.0) -> None:
        """Start publishing and, if the config says online, connect and wait until every chain
        it serves is ready (approved, balances read)."""
        if self._closed:
            raise RuntimeError(f"maker {self.name} is closed")
        if self._started:
            return
        self._started = True
        self._publisher = asyncio.create_task(self._publish_loop(), name=f"{self.name}:levels")
        if self.config.online:
            await self._go_online(wait_s)

    async def close(self) -> None:
        """Disconnect, cancel and await every task, close the chain access it owns."""
        self._closed = True
        if self._publisher is not None:
            self._publisher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._publisher
            self._publisher = None
        await self._go_offline()
        for chain in self._own_chains.values():
            await chain.close()
        self._own_chains.clear()

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
        self._wake.set()
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

    def _served(self, client: MakerClient) -> list[ChainInfo]:
        welcome = client.welcome
        if welcome is None:
            return []
        return [c for c in welcome.chains if c.chainId in self.config.chains]

    def _is_ready(self) -> bool:
        for client in self._clients:
            for info in self._served(client):
                state = self._states.get(info.chainId)
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
        self._wake.set()
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
            "stats": self.stats.as_dict(),
        }

    # ---- chains: approvals, balances, inventory ---------------------------------------------

    def _chain(self, chain_id: int) -> MakerChain | None:
        if chain_id in self._shared_chains:
            return self._shared_chains[chain_id]
        if chain_id not in self._own_chains:
            url = self._rpc_urls.get(chain_id)
            if url is None:
                return None
            self._own_chains[chain_id] = Web3MakerChain(chain_id, url)
        return self._own_chains[chain_id]

    async def _prepare(self, client: MakerClient, info: ChainInfo) -> None:
        chain = self._chain(info.chainId)
        if chain is None:
            log.warning("%s: no RPC URL for chain %s, not serving it", self.name, info.chainId)
            return
        async with self._prepare_lock:
            tokens: dict[str, TokenSpec] = {}
            for pair in info.pairs:
                for address, decimals in (
                    (pair.sellToken, pair.sellDecimals),
                    (pair.buyToken, pair.buyDecimals),
                ):
                    key = (info.chainId, address.lower())
                    if key not in self._symbols:
                        self._symbols[key] = await chain.token_symbol(address)
                    tokens[address.lower()] = TokenSpec(self._symbols[key], decimals)
            given = sorted({p.buyToken for p in info.pairs})
            for token in given:
                sent = await ensure_max_allowance(
                    chain,
                    self.wallet.private_key,
                    self.wallet.address,
                    token,
                    info.signatureTransfer,
                )
                if sent:
                    log.info(
                        "%s: approved %s on chain %s (%s)", self.name, token, info.chainId, sent
                    )
            state = self._states.get(info.chainId)
            if state is None:
                state = _ChainState(info=info, client=client, tokens=tokens)
                self._states[info.chainId] = state
            state.info, state.client, state.tokens = info, client, tokens
            await self._refresh_balances(state, chain)
            if state.nonces is None:
                # Reproducible on a fresh chain for a given seed; starting balances enter the
                # seed so a restart against a chain where this maker already traded (and so
                # already burned nonces) does not replay its old nonce stream.
                balances = ",".join(f"{t}={b}" for t, b in sorted(state.balances.items()))
                state.nonces = random.Random(
                    f"{self._seed_material}:{self.name}:nonces:{info.chainId}:{balances}"
                )
            state.ready = True
        async with self._ready:
            self._ready.notify_all()

    async def _refresh_balances(self, state: _ChainState, chain: MakerChain | None = None) -> None:
        chain = chain or self._chain(state.info.chainId)
        if chain is None:
            return
        epoch = next(self._epochs)
        given = sorted({p.buyToken.lower() for p in state.info.pairs})
        amounts = await asyncio.gather(*(chain.balance_of(t, self.wallet.address) for t in given))
        # A refresh that started earlier but finished later must not overwrite a newer one.
        if epoch > state.balances_epoch:
            state.balances = dict(zip(given, amounts, strict=True))
            state.balances_epoch = epoch
            state.balances_at = asyncio.get_running_loop().time()

    def committed(self, chain_id: int, token: str) -> int:
        token = token.lower()
        return sum(
            c.amount
            for c in self.commitments.values()
            if c.chain_id == chain_id and c.token == token
        )

    def inventory(self, chain_id: int, token: str) -> int:
        """What the maker may give of `token` now: balance less live commitments (the
        `underfunded` behaviour pretends to hold `underfunded_factor` times its balance)."""
        state = self._states.get(chain_id)
        if state is None:
            return 0
        balance = state.balances.get(token.lower(), 0)
        if self.config.behaviour == "underfunded":
            return math.floor(balance * self.config.underfunded_factor)
        return max(0, balance - self.committed(chain_id, token))

    def _sweep(self, client: MakerClient) -> None:
        # Safety net for quotes the server never confirmed (e.g. the answer was lost with the
        # connection): the server's own `expired` normally removes them first.
        now = client.server_time_ms()
        for quote_id, commitment in list(self.commitments.items()):
            if commitment.expires_at_ms + SWEEP_GRACE_MS < now:
                del self.commitments[quote_id]

    # ---- levels -----------------------------------------------------------------------------

    async def _publish_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.publish_interval_s):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self._tick()
            except Exception:  # the loop must outlive one bad tick (an RPC hiccup)
                log.exception("%s: publishing levels failed", self.name)

    async def _tick(self) -> None:
        for client in list(self._clients):
            if not client.connected:
                continue
            self._sweep(client)
            for info in self._served(client):
                state = self._states.get(info.chainId)
                if state is None or not state.ready or state.client is not client:
                    await self._prepare(client, info)
                    state = self._states.get(info.chainId)
                    if state is None or not state.ready:
                        continue
                elif state.info != info:
                    state.info = info
                loop_time = asyncio.get_running_loop().time()
                if loop_time - state.balances_at >= self.balance_refresh_s:
                    await self._refresh_balances(state)
                for pair in info.pairs:
                    await client.publish_levels(
                        info.chainId, pair.sellToken, pair.buyToken, self._levels(state, pair)
                    )

    def _levels(self, state: _ChainState, pair: PairInfo) -> list[tuple[int, int]]:
        sell = state.tokens.get(pair.sellToken.lower())
        buy = state.tokens.get(pair.buyToken.lower())
        if sell is None or buy is None:
            return []
        return self.pricing.levels(sell, buy, self.inventory(state.info.chainId, pair.buyToken))

    # ---- rfqs -------------------------------------------------------------------------------

    async def _on_welcome(self, welcome: Welcome) -> None:
        self._wake.set()  # the publish loop prepares new chains and republishes

    async def _on_rfq(self, rfq: Rfq) -> Quote | Decline | None:
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
            state = self._states.get(rfq.chainId)
            pair = None if state is None else state.info.pair(rfq.sellToken, rfq.buyToken)
            if pair is not None:
                # The rfq left the server at or after the request; a full budget after we got
                # it is surely past replyByMs, whatever the clocks say.
                delay += pair.replyBudgetMs / 1000 + LATE_MARGIN_S
            else:
                remaining_ms = rfq.replyByMs - self._server_time(rfq.chainId)
                delay += max(0.0, remaining_ms / 1000) + LATE_MARGIN_S
        try:
            await asyncio.sleep(max(0.0, delay - (loop.time() - received)))
        except asyncio.CancelledError:
            self.commitments.pop(rfq.quoteId, None)  # never sent: holds nothing
            raise
        if isinstance(reply, Quote):
            self.stats.quotes += 1
            self._wake.set()
        else:
            self.stats.declines[reply.reason] += 1
        return reply

    def _server_time(self, chain_id: int) -> int:
        state = self._states.get(chain_id)
        if state is not None:
            return state.client.server_time_ms()
        return self._clients[0].server_time_ms() if self._clients else 0

    def _decline(
        self, rfq: Rfq, reason: DeclineReason, max_sell_amount: int | None = None
    ) -> Decline:
        if max_sell_amount is not None and max_sell_amount <= 0:
            max_sell_amount = None
        return Decline(quoteId=rfq.quoteId, reason=reason, maxSellAmount=max_sell_amount)

    def _reply(self, rfq: Rfq) -> Quote | Decline:
        state = self._states.get(rfq.chainId)
        if state is None or not state.ready:
            return self._decline(rfq, "unavailable")
        info = state.info
        # Never sign for a reactor or spender other than the ones the welcome named.
        if (
            rfq.reactor.lower() != info.reactor.lower()
            or rfq.signatureTransfer.lower() != info.signatureTransfer.lower()
        ):
            return self._decline(rfq, "rejected")
        sell = state.tokens.get(rfq.sellToken.lower())
        buy = state.tokens.get(rfq.buyToken.lower())
        curve = None if sell is None or buy is None else self.pricing.curve(sell, buy)
        if curve is None:
            return self._decline(rfq, "unavailable")
        behaviour = self.config.behaviour
        if behaviour == "flaky" and self._rng.random() < self.config.flaky_decline_fraction:
            return self._decline(rfq, "unavailable")
        inventory = self.inventory(rfq.chainId, rfq.buyToken)
        depth = curve.depth(inventory)
        if behaviour == "decline":
            asked = rfq.makerReceives
            if asked is None:
                assert rfq.makerGives is not None
                asked = curve.price_exact_output(rfq.makerGives, inventory) or depth
            return self._decline(rfq, "liquidity", min(depth, asked // 2))
        if rfq.kind == "exact_input":
            assert rfq.makerReceives is not None
            assert rfq.feeAmount is not None
            receives, fee = rfq.makerReceives, rfq.feeAmount
            gives = curve.price_exact_input(receives, inventory)
            if gives is None:
                if receives <= depth:
                    return self._decline(rfq, "min_size")
                return self._decline(rfq, "liquidity", depth)
        else:
            assert rfq.makerGives is not None
            gives = rfq.makerGives
            maybe_receives = curve.price_exact_output(gives, inventory)
            if maybe_receives is None:
                return self._decline(rfq, "liquidity", depth)
            receives = maybe_receives
            fee = receives * rfq.feeBps // 10_000
        return self._sign(rfq, state, gives, receives, fee)

    def _sign(self, rfq: Rfq, state: _ChainState, gives: int, receives: int, fee: int) -> Quote:
        ttl = self.config.quote_ttl_ms
        expires = rfq.maxExpiresAtMs if ttl is None else rfq.replyByMs + ttl
        expires = min(rfq.maxExpiresAtMs, max(rfq.minExpiresAtMs, expires))
        order = RfqOrder(
            reactor=rfq.reactor,
            maker=self.wallet.address,
            taker=rfq.taker,
            inputToken=rfq.buyToken,
            inputAmount=gives,
            outputToken=rfq.sellToken,
            outputAmount=receives,
            feeAmount=fee,
            nonce=self._next_nonce(state),
            deadline=-(-expires // 1000) + self.config.deadline_slack_s,
        )
        key = self._wrong_key if self.config.behaviour == "bad_signature" else None
        signature = sign_order(
            key or self.wallet.private_key, order, rfq.chainId, rfq.signatureTransfer
        )
        self.commitments[rfq.quoteId] = Commitment(
            chain_id=rfq.chainId,
            token=rfq.buyToken.lower(),
            amount=gives,
            expires_at_ms=expires,
            nonce=order.nonce,
        )
        return Quote(
            quoteId=rfq.quoteId,
            expiresAtMs=expires,
            order=QuoteOrder.from_order(order),
            signature="0x" + signature.hex(),
        )

    def _next_nonce(self, state: _ChainState) -> int:
        assert state.nonces is not None
        while True:
            nonce = state.nonces.getrandbits(NONCE_BITS)
            if nonce not in state.used_nonces:
                state.used_nonces.add(nonce)
                return nonce

    # ---- notifications ----------------------------------------------------------------------

    async def _on_filled(self, message: Filled) -> None:
        self.stats.filled += 1
        state = self._states.get(message.chainId)
        if state is not None:
            # Read the new balances before letting go of the commitment, so the inventory is
            # never counted twice (old balance and no commitment).
            await self._refresh_balances(state)
        self.commitments.pop(message.quoteId, None)
        self._wake.set()

    async def _on_expired(self, message: Expired) -> None:
        self.stats.expired += 1
        self.commitments.pop(message.quoteId, None)
        self._wake.set()

    async def _on_released(self, message: Released) -> None:
        self.stats.released[message.reason] += 1
        if message.reason == "invalid":
            log.info("%s: quote %s invalid: %s", self.name, message.quoteId, message.detail)
        self.commitments.pop(message.quoteId, None)
        self._wake.set()

    async def _on_error(self, message: ErrorMessage) -> None:
        self.stats.errors[message.code] += 1


class MakerFleet:
    """Several simulated makers sharing one HTTP session and one chain connection per chain.

    `credentials`: maker name -> its maker credentials (one per environment it serves).
    `rng`: a seeded source (the simulator's); each maker gets its own stream derived from it in
    config order. Without one, `config.seed` (or OS entropy) seeds the fleet."""

    def __init__(
        self,
        config: FleetConfig,
        *,
        url: str,
        credentials: Mapping[str, Sequence[str]],
        rpc_urls: Mapping[int, str],
        rng: RandomLike | None = None,
        session: aiohttp.ClientSession | None = None,
        chains: Mapping[int, MakerChain] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.config = config
        self.url = url
        self._session = session
        self._own_session = session is None
        self._chains: dict[int, MakerChain] = dict(chains or {})
        self._own_chains = {
            chain_id: Web3MakerChain(chain_id, rpc_url)
            for chain_id, rpc_url in rpc_urls.items()
            if chain_id not in self._chains
        }
        self._chains.update(self._own_chains)
        source: RandomLike = rng or random.Random(config.seed)
        missing = [m.name for m in config.makers if not credentials.get(m.name)]
        if missing:
            raise ValueError(f"no maker credential for {', '.join(missing)}")
        self._credentials = {name: tuple(keys) for name, keys in credentials.items()}
        self._backoff = backoff
        self._makers_rng = {
            m.name: random.Random(f"{source.random()!r}:{m.name}") for m in config.makers
        }
        self.makers: dict[str, SimulatedMaker] = {}
        self._closed = False

    async def __aenter__(self) -> MakerFleet:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self, wait_s: float | None = 30.0) -> None:
        """Start every maker (online ones connect and get ready); all or nothing."""
        if self._closed:
            raise RuntimeError("the fleet is closed")
        if self.makers:
            return
        if self._session is None:
            self._session = aiohttp.ClientSession()
        for maker_config in self.config.makers:
            self.makers[maker_config.name] = SimulatedMaker(
                maker_config,
                url=self.url,
                api_keys=self._credentials[maker_config.name],
                chains=self._chains,
                fleet_mids=self.config.mids,
                usd_tokens=frozenset(self.config.usd_tokens),
                rng=self._makers_rng[maker_config.name],
                session=self._session,
                publish_interval_s=self.config.publish_interval_ms / 1000,
                balance_refresh_s=self.config.balance_refresh_ms / 1000,
                backoff=self._backoff,
            )
        results = await asyncio.gather(
            *(m.start(wait_s) for m in self.makers.values()), return_exceptions=True
        )
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        if failure is not None:
            await self.close()
            raise failure

    def maker(self, name: str) -> SimulatedMaker:
        try:
            return self.makers[name]
        except KeyError:
            raise KeyError(f"no maker named {name!r}; known: {', '.join(self.makers)}") from None

    async def reconfigure(self, name: str, **changes: Any) -> MakerConfig:
        """Live change of one maker: behaviour, latency, spread_bps, impact_bps, mids,
        max_inventory_fraction, online (False disconnects it, True reconnects it), …"""
        return await self.maker(name).reconfigure(**changes)

    def status(self) -> list[dict[str, Any]]:
        return [m.status() for m in self.makers.values()]

    async def close(self) -> None:
        """Stop every maker, then close the shared chain access and session (idempotent)."""
        self._closed = True
        await asyncio.gather(*(m.close() for m in self.makers.values()))
        for chain in self._own_chains.values():
            await chain.close()
        self._own_chains.clear()
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None
