"""Shapes of /_sim/keys, /_sim/limits and /_sim/faults."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from simulator.api.http.schemas import ApiModel, SnakeApiModel

ADDRESS = r"^0x[0-9a-fA-F]{40}$"


class KeyCreate(SnakeApiModel):
    partner: str = Field(
        default="demo", min_length=1, max_length=64, description="Partner name (made if new)"
    )
    name: str = Field(default="", max_length=64)
    environment: Literal["live", "test"] = Field(description="live: tx_live_ keys; test: tx_test_")
    scopes: list[str] = Field(min_length=1, max_length=8)
    tier: str = Field(default="default", max_length=32)
    maker_wallet: str | None = Field(
        default=None, pattern=ADDRESS, description="Maker credentials only: funding wallet"
    )


class KeyRecord(SnakeApiModel):
    key_id: str = Field(description="Public prefix: safe to log")
    partner_id: str
    partner: str
    name: str
    environment: str
    scopes: list[str]
    tier: str
    status: Literal["active", "suspended", "revoked"]
    created_at: str
    maker_wallet: str | None


class KeyCreated(KeyRecord):
    key: str = Field(description="The full key. Shown once; only a hash of the secret is kept")


class KeyList(ApiModel):
    keys: list[KeyRecord]


class Limits(SnakeApiModel):
    ip_backstop_per_minute: int = Field(gt=0)
    keyless_per_minute: int = Field(gt=0)
    tiers: dict[str, int]
    outstanding_default: int = Field(gt=0)
    outstanding_aggregator: int = Field(gt=0)


class LimitsUpdate(SnakeApiModel):
    ip_backstop_per_minute: int | None = Field(default=None, gt=0)
    keyless_per_minute: int | None = Field(default=None, gt=0)
    tiers: dict[str, int] | None = None
    outstanding_default: int | None = Field(default=None, gt=0)
    outstanding_aggregator: int | None = Field(default=None, gt=0)
    reset_windows: bool = Field(default=False, description="Forget every rate-limit window now")


class FaultState(SnakeApiModel):
    chain_unreachable: list[int] = Field(description="Chains whose RPC calls fail at once")
    venue_paused: bool = Field(description="Firm quotes answer 503 venue_unavailable")
    internal_errors: int = Field(description="The next N API requests fail with a 500 internal")
    indexer_paused: list[int] = Field(description="Chains whose fills are not indexed for now")


class FaultUpdate(SnakeApiModel):
    chain_unreachable: list[int] | None = None
    venue_paused: bool | None = None
    internal_errors: int | None = Field(default=None, ge=0, le=1000)
    indexer_paused: list[int] | None = None
