"""Shapes of the simulator's own control API under /_sim (not part of the real service)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from simulator.api.http.schemas import ApiModel, SnakeApiModel


class ClockState(SnakeApiModel):
    now: str = Field(description="Simulated time, ISO-8601 UTC")
    offset_seconds: float = Field(description="How far simulated time runs ahead of real time")


class ClockAdvance(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # Whole seconds: block timestamps are whole seconds, and service and chain time must move
    # by exactly the same amount.
    seconds: int = Field(gt=0, le=10 * 365 * 86400, description="Whole seconds to move forward")


class ContractsInfo(SnakeApiModel):
    signature_transfer: str
    reactor: str
    router: str
    wallet_factory: str
    fee_recipient: str


class TokenInfo(SnakeApiModel):
    symbol: str
    name: str
    address: str
    decimals: int
    usdt_like: bool


class CorridorInfo(SnakeApiModel):
    pair: str
    base: str
    quote: str
    mode: str
    reply_budget_ms: int
    quote_ttl_s: int
    preferred_wait_ms: int
    fee_bps: int


class ChainInfo(SnakeApiModel):
    chain_id: int
    environment: str
    name: str
    rpc_url: str
    managed: bool
    min_size: str
    contracts: ContractsInfo
    tokens: list[TokenInfo]
    corridors: list[CorridorInfo]


class ChainWithoutContractsInfo(SnakeApiModel):
    """A chain the venue knows without a settlement contract: v1 answers a key of its
    environment 400 "no settlement contract deployed"; no node runs for it."""

    chain_id: int
    environment: str
    name: str


class WalletInfo(SnakeApiModel):
    label: str = Field(description="The wallet's fixed label (demo-taker-0, maker-0, ...)")
    address: str
    private_key: str | None = None
    name: str | None = Field(
        default=None,
        description="Maker wallets: the simulated maker's name (alpha, ...), as in the log and "
        "/_sim/makers; null when no configured maker uses the wallet",
    )


class FundingInfo(SnakeApiModel):
    native_wei: str = Field(description="Native coin minted to every funded wallet, in wei")
    native: int = Field(description="The same in whole coins")
    token_whole_units: int = Field(description="Whole units of every token per funded wallet")


class InstanceInfo(SnakeApiModel):
    id: int = Field(description="Its number on the venue (0: the first, or the only one)")
    pid: int
    api_url: str = Field(description="Where it listens itself")


class SimInfo(SnakeApiModel):
    simulator: str
    version: str
    api_url: str
    console_url: str | None = Field(description="The console page (null without the control API)")
    pid: int
    seed: int
    environment: str
    chains: list[ChainInfo]
    chains_without_contracts: list[ChainWithoutContractsInfo]
    demo_wallets: list[WalletInfo]
    maker_wallets: list[WalletInfo]
    funding: FundingInfo = Field(description="What every demo and maker wallet starts with")
    provider_treasury: str
    instances: list[InstanceInfo] = Field(
        description="The venue's instances alive (one, unless several share a Redis: "
        "docs/scaling.md)"
    )
