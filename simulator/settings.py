"""Settings: defaults from `default_settings.yaml`, overlaid by an optional YAML file and CLI flags.

pydantic is used here because settings are an edge (a file a person writes); inside the simulator
the validated values are read as plain attributes.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from makers.config import FleetConfig, default_fleet

DEFAULT_SETTINGS_FILE = Path(__file__).with_name("default_settings.yaml")

ChainEnvironment = Literal["live", "test"]
CorridorMode = Literal["RFQ", "BOOK"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ApiSettings(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)


class CorridorTiming(_Strict):
    mode: CorridorMode = "RFQ"
    reply_budget_ms: int = Field(default=750, gt=0, le=10_000)
    quote_ttl_s: int = Field(default=60, gt=0, le=60)
    preferred_wait_ms: int = Field(default=250, ge=0)
    fee_bps: int = Field(default=5, ge=0, le=1000)


class CorridorSettings(_Strict):
    base: str
    quote: str
    mode: CorridorMode | None = None
    reply_budget_ms: int | None = Field(default=None, gt=0, le=10_000)
    quote_ttl_s: int | None = Field(default=None, gt=0, le=60)
    preferred_wait_ms: int | None = Field(default=None, ge=0)
    fee_bps: int | None = Field(default=None, ge=0, le=1000)

    def timing(self, defaults: CorridorTiming) -> CorridorTiming:
        """This corridor's timing: its own values where set, else the defaults."""
        own = {k: v for k, v in self.model_dump().items() if k in CorridorTiming.model_fields}
        return defaults.model_copy(update={k: v for k, v in own.items() if v is not None})


class TokenSettings(_Strict):
    symbol: str = Field(pattern=r"^[A-Z][A-Z0-9]{1,10}$")
    name: str
    decimals: int = Field(ge=0, le=36)
    usdt_like: bool = False  # approve() reverts nonzero->nonzero and returns no bool


class ChainSettings(_Strict):
    chain_id: int = Field(gt=0)
    environment: ChainEnvironment
    name: str
    min_size: Decimal = Field(gt=0)  # minimum firm size in whole tokens of the named side
    rpc_url: str | None = None  # attach to this node instead of starting Anvil
    tokens: tuple[TokenSettings, ...]
    corridors: tuple[CorridorSettings, ...]

    @model_validator(mode="after")
    def _corridors_name_known_tokens(self) -> ChainSettings:
        symbols = {t.symbol for t in self.tokens}
        if len(symbols) != len(self.tokens):
            raise ValueError(f"chain {self.chain_id}: duplicate token symbols")
        for corridor in self.corridors:
            for symbol in (corridor.base, corridor.quote):
                if symbol not in symbols:
                    raise ValueError(
                        f"chain {self.chain_id}: corridor names unknown token {symbol}"
                    )
            if corridor.base == corridor.quote:
                raise ValueError(f"chain {self.chain_id}: corridor {corridor.base} with itself")
        return self


class LimitSettings(_Strict):
    ip_backstop_per_minute: int = Field(default=600, gt=0)
    keyless_per_minute: int = Field(default=60, gt=0)
    tiers: dict[str, int] = Field(default_factory=lambda: {"default": 60})
    outstanding_default: int = Field(default=4, gt=0)
    outstanding_aggregator: int = Field(default=32, gt=0)

    @model_validator(mode="after")
    def _has_default_tier(self) -> LimitSettings:
        if "default" not in self.tiers or any(v <= 0 for v in self.tiers.values()):
            raise ValueError("limits.tiers needs a positive 'default' tier")
        return self


class ProofTiming(_Strict):
    window_s: float = Field(default=60, gt=0)
    grant_s: float = Field(default=43200, gt=0)


class FundingSettings(_Strict):
    demo_wallets: int = Field(default=3, ge=1, le=50)
    makers: int = Field(default=4, ge=1, le=50)
    native_wei: int = Field(default=10**21, gt=0)
    token_whole_units: int = Field(default=10**6, gt=0)


# DESIGN "Webhook retry schedule": the delay before each attempt, counted from the end of the
# previous one; the first is the immediate delivery. Ten attempts span about 75.6 hours.
RETRY_SCHEDULE_S: tuple[float, ...] = (0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)


class WebhookSettings(_Strict):
    allow_http: bool = False  # developer flag: accept http:// endpoint URLs (spec: https only)
    retry_schedule_s: tuple[float, ...] = Field(default=RETRY_SCHEDULE_S, min_length=1)
    ack_timeout_s: float = Field(default=15, gt=0)  # a response is awaited this long
    max_concurrent: int = Field(default=64, gt=0)  # attempts in flight, all endpoints together
    max_concurrent_per_endpoint: int = Field(default=8, gt=0)  # ... to one endpoint
    max_endpoints_per_partner: int = Field(default=16, gt=0)
    keep_finished: int = Field(default=10_000, ge=0)  # finished deliveries kept for /_sim
    state_dir: str | None = None  # local CA lives here; None: $RFQSIM_STATE_DIR, else ./.rfqsim

    @model_validator(mode="after")
    def _non_negative_delays(self) -> WebhookSettings:
        if any(delay < 0 for delay in self.retry_schedule_s):
            raise ValueError("webhooks.retry_schedule_s: delays must be >= 0")
        return self


class RampSettings(_Strict):
    """The v2 fiat ramp (docs/ramp.md) and the provider behind it (docs/provider-sandbox.md)."""

    provider_id: str = Field(default="ngnramp", pattern=r"^[a-z0-9][a-z0-9_-]{0,39}$")
    # A provider sandbox started elsewhere (`python -m provider_sandbox serve`); None: rfqsim
    # starts one in its own process on `provider_port` (0: a free port).
    provider_url: str | None = Field(default=None, pattern=r"^https?://[^ ]+$")
    provider_port: int = Field(default=0, ge=0, le=65535)
    provider_api_key: str = Field(default="sk_sandbox_rfqsim", min_length=1)
    provider_timeout_s: float = Field(default=10, gt=0, le=120)  # per provider API call
    # Signs the provider's webhooks to us. None: a fresh random secret per run (the in-process
    # sandbox is told it); with provider_url set it must match the sandbox's own setting.
    webhook_secret: str | None = Field(default=None, min_length=16)
    reopen_url_base: str = "http://127.0.0.1:8080"  # front-end link in the instructions email
    sweep_interval_s: float = Field(default=300, gt=0)  # background re-check of transfers
    recheck_s: float = Field(default=8, ge=0)  # a read re-checks the provider when state is older
    kyc_reread_s: float = Field(
        default=15, ge=0
    )  # kyc/status re-reads the provider at most so often
    banks_cache_s: float = Field(default=900, ge=0)  # banks list cached per provider
    expire_after_s: float = Field(default=600, ge=0)  # AWAITING_FUNDS -> EXPIRED after expiresAt
    recheck_days: float = Field(default=3, ge=0)  # EXPIRED transfers re-checked this long
    retry_after_s: float = Field(default=1200, gt=0)  # stuck at funds_converted before a retry
    drift_bound: float = Field(default=0.01, gt=0, lt=1)  # quote_drift beyond this fraction
    smtp: str | None = Field(default=None, pattern=r"^[^ :]+:[0-9]{1,5}$")  # HOST:PORT for emails


class BookSettings(_Strict):
    """The v1 book: resting limit orders and the swaps composed of them (docs/decisions.md
    "v1 book")."""

    sweep_interval_s: float = Field(default=300, gt=0)  # limit-order sweep cadence (spec: 5 min)
    notify_lag_s: float = Field(default=600, ge=0)  # expired/cancelled events wait past deadline
    swap_ttl_s: float = Field(default=60, gt=0)  # a built swap holds its orders this long at most
    max_deadline_s: int = Field(default=365 * 86_400, gt=0)  # deadlines capped (about one year)


class Settings(_Strict):
    api: ApiSettings = ApiSettings()
    environment: Literal["staging", "production"] = "staging"
    seed: int = 0
    trusted_proxy: bool = False
    expiry_grace_s: float = Field(default=0, ge=0)  # quoted -> expired this long after expiresAt
    limits: LimitSettings = LimitSettings()
    proof: ProofTiming = ProofTiming()
    max_json_body_bytes: int = Field(default=1 << 20, gt=0)
    corridor_defaults: CorridorTiming = CorridorTiming()
    chains: tuple[ChainSettings, ...]
    funding: FundingSettings = FundingSettings()
    webhooks: WebhookSettings = WebhookSettings()
    ramp: RampSettings = RampSettings()
    book: BookSettings = BookSettings()
    # The simulated maker fleet started with the simulator (None: no makers; `--no-makers`).
    makers: FleetConfig | None = Field(default_factory=default_fleet)

    @model_validator(mode="after")
    def _unique_chains(self) -> Settings:
        ids = [c.chain_id for c in self.chains]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate chain_id in chains")
        return self

    def chain(self, chain_id: int) -> ChainSettings:
        for chain in self.chains:
            if chain.chain_id == chain_id:
                return chain
        raise KeyError(chain_id)


def _deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value  # lists (chains, corridors) are replaced whole, not merged
    return merged


def load_settings(
    config_file: Path | None = None, overrides: dict[str, Any] | None = None
) -> Settings:
    """Defaults, then the YAML `config_file`, then `overrides` (from CLI flags)."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_SETTINGS_FILE.read_text())
    if config_file is not None:
        loaded = yaml.safe_load(config_file.read_text()) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{config_file}: top level must be a mapping")
        data = _deep_merge(data, loaded)
    if overrides:
        data = _deep_merge(data, overrides)
    return Settings.model_validate(data)
