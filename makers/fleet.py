"""Simulated makers: real maker-stream clients with real wallets, prices and failure modes.

A `SimulatedMaker` holds one funding wallet. For every chain it serves it makes sure the
chain's signature-transfer contract (from `welcome`) may spend every token it gives (a max
approval; a nonzero allowance is reset to 0 first, as USDT-like tokens demand), reads its real
balances, publishes levels about every second (and right after a fill; a quote or a released
one republishes the directions it changed), answers rfqs after a latency drawn from its
distribution, signs real orders (the bytes of `contracts.orders.sign_order`) with unique
Permit2 nonces, and tracks what its live quotes hold from its own quotes and the
`filled`/`expired`/`released` notifications. Its `behaviour` selects a failure mode.

`MakerFleet` runs several of them over one HTTP session and one chain connection per chain,
with live reconfiguration (behaviour, latency, prices, online/offline) and clean shutdown.

Layout: `makers.simulated` (the maker), `makers.chainbook` (approvals, balances, nonces,
inventory), `makers.commitments` (what live quotes hold), `makers.quoting` (pricing an rfq,
signing the order); their public names are re-exported here.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from makers.chain import MakerChain, connect
from makers.chainbook import NONCE_BITS, ChainState
from makers.client import Backoff
from makers.commitments import Commitment, Commitments
from makers.config import FleetConfig, MakerConfig
from makers.latency import RandomLike
from makers.maker_stats import MakerStats
from makers.simulated import LATE_MARGIN_S, SWEEP_GRACE_MS, SimulatedMaker

__all__ = [
    "LATE_MARGIN_S",
    "NONCE_BITS",
    "SWEEP_GRACE_MS",
    "ChainState",
    "Commitment",
    "Commitments",
    "MakerFleet",
    "MakerStats",
    "SimulatedMaker",
]


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
        v1_keys: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.config = config
        self.url = url
        self._session = session
        self._own_session = session is None
        self._chains: dict[int, MakerChain] = dict(chains or {})
        self._own_chains = {
            chain_id: connect(chain_id, rpc_url)
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
        # maker name -> environment -> v1 API key, for the book roles (makers/book.py)
        self._v1_keys = {name: dict(keys) for name, keys in (v1_keys or {}).items()}
        self._v1_session: aiohttp.ClientSession | None = None
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

    async def start(self, wait_s: float | None = 30.0) -> dict[str, int]:
        """Start every maker (online ones connect, get ready, have their levels read by the
        server and place their first resting orders); all or nothing. Returns the resting orders
        each maker placed in that first round, by name."""
        if self._closed:
            raise RuntimeError("the fleet is closed")
        if self.makers:
            return {}
        if self._session is None:
            self._session = aiohttp.ClientSession()
        if self._v1_keys and self._v1_session is None:
            self._v1_session = aiohttp.ClientSession(connector=self._v1_connector())
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
                v1_keys=self._v1_keys.get(maker_config.name),
                v1_session=self._v1_session,
            )
        results = await asyncio.gather(
            *(m.start(wait_s) for m in self.makers.values()), return_exceptions=True
        )
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        if failure is not None:
            await self.close()
            raise failure
        return {
            name: placed
            for name, placed in zip(self.makers, results, strict=True)
            if isinstance(placed, int)
        }

    def _v1_connector(self) -> aiohttp.TCPConnector:
        """The book roles' v1 calls leave from `v1_source_address` when the simulator is on
        loopback: a per-IP backstop of their own (config.v1_source_address)."""
        host = urlsplit(self.url).hostname or ""
        source = self.config.v1_source_address
        if source is not None and (host == "localhost" or host.startswith("127.")):
            return aiohttp.TCPConnector(local_addr=(source, 0))
        return aiohttp.TCPConnector()

    def maker(self, name: str) -> SimulatedMaker:
        try:
            return self.makers[name]
        except KeyError:
            raise KeyError(f"no maker named {name!r}; known: {', '.join(self.makers)}") from None

    async def reconfigure(self, name: str, **changes: Any) -> MakerConfig:
        """Live change of one maker: behaviour, latency, spread_bps, impact_bps, mids,
        max_inventory_fraction, online (False disconnects it, True reconnects it), …"""
        return await self.maker(name).reconfigure(**changes)

    async def chain_restarted(self, chain_id: int) -> None:
        """A chain's node was replaced by a fresh one at the same URL: every maker approves and
        reads its balances there again before quoting on it."""
        for maker in self.makers.values():
            maker.chain_restarted(chain_id)

    def status(self) -> list[dict[str, Any]]:
        return [m.status() for m in self.makers.values()]

    async def close(self) -> None:
        """Stop every maker, then close the shared chain access and session (idempotent)."""
        self._closed = True
        await asyncio.gather(*(m.close() for m in self.makers.values()))
        if self._v1_session is not None:
            await self._v1_session.close()
            self._v1_session = None
        for chain in self._own_chains.values():
            await chain.close()
        self._own_chains.clear()
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None
