"""The simulated fleet's names for its wallets (alpha, bravo, ...): timelines, the maker stream's
journal and the console record makers by wallet and credential prefix and show these names."""

from __future__ import annotations

from collections.abc import Mapping


class MakerNames:
    def __init__(self, by_wallet: Mapping[str, str]) -> None:
        self._by_wallet = {wallet.lower(): name for wallet, name in by_wallet.items()}
        self._by_name = {name: wallet for wallet, name in by_wallet.items()}

    def name_of(self, wallet: str) -> str | None:
        return self._by_wallet.get(wallet.lower())

    def wallet_of(self, name: str) -> str | None:
        return self._by_name.get(name)
