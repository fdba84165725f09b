"""The console's Venue view of each chain: its head and what the demo and maker wallets hold
(GET /_sim/chains). Read fresh on every call through the `WalletBalances` port."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from rfqkit.chain_errors import ChainUnreadable


@dataclass(frozen=True)
class WatchedWallet:
    label: str  # demo-0, maker-0, ...
    address: str
    name: str | None  # the simulated maker using it (alpha, ...)


@dataclass(frozen=True)
class WalletHoldings:
    wallet: WatchedWallet
    native_wei: int
    tokens: dict[str, int]  # token symbol -> base units


@dataclass
class ChainHoldings:
    chain_id: int
    block: int | None  # None: the chain could not be read
    error: str | None = None
    wallets: list[WalletHoldings] = field(default_factory=list)


class WalletBalances(Protocol):
    async def read(
        self, chain_id: int, wallets: list[WatchedWallet], tokens: dict[str, str]
    ) -> ChainHoldings:
        """The head and each wallet's native and token balances (tokens: symbol -> address),
        in one round trip. Raises ChainUnreadable when the chain cannot be read."""
        ...


async def holdings(
    reader: WalletBalances,
    chains: dict[int, dict[str, str]],
    wallets: list[WatchedWallet],
) -> list[ChainHoldings]:
    """Every chain (chain id -> its tokens by symbol), an unreadable one with its error."""
    out: list[ChainHoldings] = []
    for chain_id, tokens in sorted(chains.items()):
        try:
            out.append(await reader.read(chain_id, wallets, tokens))
        except ChainUnreadable as exc:
            out.append(ChainHoldings(chain_id, None, str(exc)))
    return out
