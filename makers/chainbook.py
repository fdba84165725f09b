"""What a simulated maker knows about the chains it serves: the approvals it checked, its token
symbols, decimals and balances, its nonce streams, and what its live quotes hold (so what it
may still give)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from makers.chain import MakerChain, connect, ensure_max_allowance
from makers.client import MakerClient
from makers.commitments import Commitments
from makers.pricing import TokenSpec
from rfqkit.maker_protocol import WelcomeChain
from rfqkit.wallets import Wallet

log = logging.getLogger("makers.fleet")

NONCE_BITS = 248
USED_NONCES_KEPT = 1_024  # per chain: the most recent nonces remembered as signed


@dataclass
class ChainState:
    """What the maker knows about one chain it serves."""

    info: WelcomeChain  # from the latest welcome naming this chain
    client: MakerClient  # the connection (credential) that serves it
    tokens: dict[str, TokenSpec]  # by lower-case address: symbol and decimals
    balances: dict[str, int] = field(default_factory=dict)  # given tokens, by lower-case address
    balances_epoch: int = 0  # sequence number of the refresh the balances came from
    balances_at: float = float("-inf")  # loop time of that refresh
    nonces: random.Random | None = None  # this chain's nonce stream (set once)
    used_nonces: set[int] = field(default_factory=set)  # recently signed: never twice
    used_order: deque[int] = field(default_factory=deque)  # used_nonces, oldest first
    ready: bool = False  # approvals checked and balances read


class ChainBook:
    """Chain states by chain id, live commitments, and the chain access behind them. `chains`
    is owned by the caller; what is made here from `rpc_urls` is closed by `close()`."""

    def __init__(
        self,
        name: str,
        wallet: Wallet,
        *,
        seed_material: str,
        rpc_urls: Mapping[int, str] | None = None,
        chains: Mapping[int, MakerChain] | None = None,
    ) -> None:
        self.name = name
        self.wallet = wallet
        self._seed_material = seed_material  # nonce streams derive from it
        self._rpc_urls = dict(rpc_urls or {})
        self._shared_chains = dict(chains or {})
        self._own_chains: dict[int, MakerChain] = {}
        self.states: dict[int, ChainState] = {}
        self.commitments = Commitments()  # live quotes by quoteId
        self._symbols: dict[tuple[int, str], str] = {}  # (chain, lower token) -> symbol
        self._prepare_lock = asyncio.Lock()  # one prepare (approvals, balances) at a time
        self._epochs = itertools.count(1)  # orders balance refreshes

    def chain(self, chain_id: int) -> MakerChain | None:
        if chain_id in self._shared_chains:
            return self._shared_chains[chain_id]
        if chain_id not in self._own_chains:
            url = self._rpc_urls.get(chain_id)
            if url is None:
                return None
            self._own_chains[chain_id] = connect(chain_id, url)
        return self._own_chains[chain_id]

    async def close(self) -> None:
        for chain in self._own_chains.values():
            await chain.close()
        self._own_chains.clear()

    async def prepare(self, client: MakerClient, info: WelcomeChain) -> None:
        """Approvals, symbols, balances and the nonce stream of one chain; ready after it."""
        chain = self.chain(info.chain_id)
        if chain is None:
            log.warning("%s: no RPC URL for chain %s, not serving it", self.name, info.chain_id)
            return
        async with self._prepare_lock:
            tokens: dict[str, TokenSpec] = {}
            for pair in [*info.pairs, *info.book_pairs]:
                for address, decimals in (
                    (pair.sell_token, pair.sell_decimals),
                    (pair.buy_token, pair.buy_decimals),
                ):
                    key = (info.chain_id, address.lower())
                    if key not in self._symbols:
                        self._symbols[key] = await chain.token_symbol(address)
                    tokens[address.lower()] = TokenSpec(self._symbols[key], decimals)
            # Book pairs too: the v1 roles give those tokens (resting orders through the
            # signature-transfer contract; the filling operator through the reactor).
            given = sorted({p.buy_token for p in [*info.pairs, *info.book_pairs]})
            for token in given:
                sent = await ensure_max_allowance(
                    chain,
                    self.wallet.private_key,
                    self.wallet.address,
                    token,
                    info.signature_transfer,
                )
                if sent:
                    log.info(
                        "%s: approved %s on chain %s (%s)", self.name, token, info.chain_id, sent
                    )
            state = self.states.get(info.chain_id)
            if state is None:
                state = ChainState(info=info, client=client, tokens=tokens)
                self.states[info.chain_id] = state
            state.info, state.client, state.tokens = info, client, tokens
            await self.refresh_balances(state, chain)
            if state.nonces is None:
                # Reproducible on a fresh chain for a given seed; starting balances enter the
                # seed so a restart against a chain where this maker already traded (and so
                # already burned nonces) does not replay its old nonce stream.
                balances = ",".join(f"{t}={b}" for t, b in sorted(state.balances.items()))
                state.nonces = random.Random(
                    f"{self._seed_material}:{self.name}:nonces:{info.chain_id}:{balances}"
                )
            state.ready = True

    async def refresh_balances(self, state: ChainState, chain: MakerChain | None = None) -> None:
        chain = chain or self.chain(state.info.chain_id)
        if chain is None:
            return
        epoch = next(self._epochs)
        given = sorted({p.buy_token.lower() for p in [*state.info.pairs, *state.info.book_pairs]})
        amounts = await asyncio.gather(*(chain.balance_of(t, self.wallet.address) for t in given))
        # A refresh that started earlier but finished later must not overwrite a newer one.
        if epoch > state.balances_epoch:
            state.balances = dict(zip(given, amounts, strict=True))
            state.balances_epoch = epoch
            state.balances_at = asyncio.get_running_loop().time()

    def committed(self, chain_id: int, token: str) -> int:
        return self.commitments.total(chain_id, token)

    def inventory(self, chain_id: int, token: str, underfunded_factor: Decimal | None) -> int:
        """What may be given of `token` now: balance less live commitments, or with an
        `underfunded_factor` that many times the balance (commitments ignored)."""
        state = self.states.get(chain_id)
        if state is None:
            return 0
        balance = state.balances.get(token.lower(), 0)
        if underfunded_factor is not None:
            return math.floor(balance * underfunded_factor)
        return max(0, balance - self.commitments.total(chain_id, token))

    @staticmethod
    def next_nonce(state: ChainState) -> int:
        assert state.nonces is not None
        while True:
            nonce = state.nonces.getrandbits(NONCE_BITS)
            if nonce not in state.used_nonces:
                state.used_nonces.add(nonce)
                state.used_order.append(nonce)
                if len(state.used_order) > USED_NONCES_KEPT:
                    # 248 random bits never repeat in practice; the set only guards against a
                    # misbehaving stream, and a set of every nonce ever signed grows forever.
                    state.used_nonces.discard(state.used_order.popleft())
                return nonce
