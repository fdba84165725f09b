"""The run's setup on the simulator, made once by the master (or the local process) outside
the measured traffic, and what users receive of it (:class:`RunSetup`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from eth_account import Account

from loadtests.control import deal_erc20
from loadtests.market import Market

# Limits while loading: the per-IP backstop, keyless rate and outstanding cap are sized for one
# integrator, not for a storm from one loopback address (restored at test_stop).
LOAD_LIMITS = {
    "ip_backstop_per_minute": 1_000_000_000,
    "keyless_per_minute": 1_000_000_000,
    "outstanding_default": 1_000_000,
    "reset_windows": True,
}
RESTORED_LIMIT_FIELDS = (
    "ip_backstop_per_minute",
    "keyless_per_minute",
    "tiers",
    "outstanding_default",
    "outstanding_aggregator",
)
TAKER_FUNDING_WHOLE = 10**9  # per token per load taker: more than any bounded run reserves


@dataclass(frozen=True)
class RunSetup:
    """What users need, as received from the master (or made locally)."""

    market: Market
    api_key: str
    takers: tuple[tuple[str, str], ...]  # (address, private key): throwaway wallets
    clock_offset_s: float  # simulator clock minus this machine's clock
    extra: dict[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSetup:
        return cls(
            market=Market.from_json(data["market"]),
            api_key=str(data["api_key"]),
            takers=tuple((str(a), str(k)) for a, k in data["takers"]),
            clock_offset_s=float(data["clock_offset_s"]),
            extra=dict(data.get("extra", {})),
        )

    def service_now_ms(self) -> int:
        return int((time.time() + self.clock_offset_s) * 1000)


def fund_takers(info: dict[str, Any], market: Market, count: int) -> list[tuple[str, str]]:
    """``count`` fresh wallets (address, private key) holding plenty of every token of the
    market's chain (Anvil's ``anvil_dealERC20``)."""
    chain = next(c for c in info["chains"] if int(c["chain_id"]) == market.chain_id)
    takers = []
    for _ in range(count):
        account = Account.create()
        takers.append((str(account.address), "0x" + bytes(account.key).hex()))
    for token in market.tokens.values():
        amount = TAKER_FUNDING_WHOLE * 10**token.decimals
        for address, _ in takers:
            deal_erc20(str(chain["rpc_url"]), token.address, address, amount)
    return takers


def limits_to_restore(saved: dict[str, Any]) -> dict[str, Any]:
    """The ``PUT /_sim/limits`` body that puts ``saved`` (a GET before the run) back."""
    return {**{k: saved[k] for k in RESTORED_LIMIT_FIELDS if k in saved}, "reset_windows": True}
