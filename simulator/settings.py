"""Settings: defaults from `default_settings.yaml`, overlaid by an optional YAML file, then by
`RFQSIM_*` environment variables, then by CLI flags (docs/configuration.md lists every setting).

pydantic is used here because settings are an edge (a file a person writes); inside the simulator
the validated values are read as plain attributes. The environment is read by pydantic-settings
(`RFQSIM_SEED=7`, nested with `__`: `RFQSIM_API__PORT=9090`, lists and mappings as JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from makers.config import FleetConfig, default_fleet
from rfqkit.config_model import StrictModel

DEFAULT_SETTINGS_FILE = Path(__file__).with_name("default_settings.yaml")
ENV_PREFIX = "RFQSIM_"
ENV_NESTED_DELIMITER = "__"
# The first configured chain's Anvil listens here, the next ones count up.
DEFAULT_RPC_PORT = 8545

ChainEnvironment = Literal["live", "test"]
CorridorMode = Literal["RFQ", "BOOK"]


class ApiSettings(StrictModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    # On SIGTERM/SIGINT: requests in flight get this long to finish before they are cancelled.
    shutdown_grace_s: float = Field(default=1.0, ge=0, le=60)
    # The whole stop (fleet, requests, background work, chains) must end within this; past it
    # the process exits at once with status 1 (a second signal does the same straight away).
    stop_deadline_s: float = Field(default=10.0, gt=0, le=300)
    # False: no /_sim control API (404 as on a real deployment) and a ready file with only the
    # inputs a QA team gets from an operator (docs/conformance.md "foreign deployment").
    control_api: bool = True
    # Host names answered besides loopback names and IP addresses (docs/security.md): the
    # names a browser or a client reaches this machine by, e.g. a LAN name under --host 0.0.0.0.
    allowed_hosts: list[str] = Field(default_factory=list)


class CorridorTiming(StrictModel):
    mode: CorridorMode = "RFQ"
    reply_budget_ms: int = Field(default=750, gt=0, le=10_000)
    quote_ttl_s: int = Field(default=60, gt=0, le=60)
    preferred_wait_ms: int = Field(default=250, ge=0)
    fee_bps: int = Field(default=5, ge=0, le=1000)


class CorridorSettings(StrictModel):
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


class TokenSettings(StrictModel):
    symbol: str = Field(pattern=r"^[A-Z][A-Z0-9]{1,10}$")
    name: str
    decimals: int = Field(ge=0, le=36)
    usdt_like: bool = False  # approve() reverts nonzero->nonzero and returns no bool


class ChainSettings(StrictModel):
    chain_id: int = Field(gt=0)
    environment: ChainEnvironment
    name: str
    min_size: Decimal = Field(gt=0)  # minimum firm size in whole tokens of the named side
    rpc_url: str | None = None  # attach to this node instead of starting Anvil
    # Port of the Anvil rfqsim starts for this chain; None: `rpc_port` + the chain's position in
    # `chains` (8545, 8546, ...); 0: a free port chosen by Anvil.
    rpc_port: int | None = Field(default=None, ge=0, le=65535)
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


class ChainWithoutContractsSettings(StrictModel):
    """A chain the venue knows but has no settlement contract on (spec 3 "Authentication" item
    3): rfqsim starts no node for it; a v1 call naming it with a key of its environment is 400
    "no settlement contract deployed on chain N"."""

    chain_id: int = Field(gt=0)
    environment: ChainEnvironment
    name: str


class LimitSettings(StrictModel):
    ip_backstop_per_minute: int = Field(default=600, gt=0)
    keyless_per_minute: int = Field(default=60, gt=0)
    tiers: dict[str, int] = Field(default_factory=lambda: {"default": 60})
    outstanding_default: int = Field(default=4, gt=0)
    outstanding_aggregator: int = Field(default=32, gt=0)

    @field_validator("tiers")
    @classmethod
    def _has_default_tier(cls, tiers: dict[str, int]) -> dict[str, int]:
        if "default" not in tiers or any(v <= 0 for v in tiers.values()):
            raise ValueError("limits.tiers needs a positive 'default' tier")
        return tiers


class ProofTiming(StrictModel):
    window_s: float = Field(default=60, gt=0)
    grant_s: float = Field(default=43200, gt=0)
    wall_clock_when_moved: bool = True  # proofs signed by a real clock stay fresh


class FundingSettings(StrictModel):
    demo_wallets: int = Field(default=3, ge=1, le=50)
    makers: int = Field(default=4, ge=1, le=50)
    native_wei: int = Field(default=10**21, gt=0)
    token_whole_units: int = Field(default=10**6, gt=0)


# The webhook retry schedule: the delay before each attempt, counted from the end
# of the previous one; the first is the immediate delivery. Ten attempts span about 75.6 hours.
RETRY_SCHEDULE_S: tuple[float, ...] = (0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)


class WebhookSettings(StrictModel):
    allow_http: bool = False  # developer flag: accept http:// endpoint URLs (spec: https only)
    retry_schedule_s: tuple[float, ...] = Field(default=RETRY_SCHEDULE_S, min_length=1)
    ack_timeout_s: float = Field(default=15, gt=0)  # a response is awaited this long
    max_concurrent: int = Field(default=64, gt=0)  # attempts in flight, all endpoints together
    max_concurrent_per_endpoint: int = Field(default=8, gt=0)  # ... to one endpoint
    max_endpoints_per_partner: int = Field(default=16, gt=0)
    # Finished deliveries stay in the history file this long after their last attempt (25 h:
    # the RFQ records' horizon, the 24 h correction window and an hour; decisions W15).
    keep_finished_s: float = Field(default=90_000, gt=0)
    state_dir: str | None = None  # local CA lives here; None: $RFQSIM_STATE_DIR, else ./.rfqsim

    @model_validator(mode="before")
    @classmethod
    def _retired_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "keep_finished" in data:
            raise ValueError(
                "webhooks.keep_finished is retired: finished deliveries are no longer counted "
                "but kept by time in the history file; set webhooks.keep_finished_s (seconds "
                "after a delivery's last attempt, default 90000) instead"
            )
        return data

    @model_validator(mode="after")
    def _non_negative_delays(self) -> WebhookSettings:
        if any(delay < 0 for delay in self.retry_schedule_s):
            raise ValueError("webhooks.retry_schedule_s: delays must be >= 0")
        return self


class IdempotencySettings(StrictModel):
    """Idempotency-Key on the v1 POSTs that create."""

    ttl_s: float = Field(default=86_400, gt=0)  # a stored response is replayed this long
    max_records: int = Field(default=100_000, gt=0)  # oldest finished records go first beyond


class RampSettings(StrictModel):
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


class FeedSettings(StrictModel):
    """The public rates feed (/pairs, /tickers, /historical_trades; docs/rates-feed.md)."""

    # Responses are cached this long (also Cache-Control max-age); 0 turns the cache off.
    cache_s: int = Field(default=2, ge=0, le=300)
    chains: tuple[int, ...] | None = None  # chains whose corridors are published; None: all
    # Token symbol -> the symbol the feed publishes (spec: the naira stablecoin is NGN).
    published_symbols: dict[str, str] = Field(default_factory=lambda: {"NGNS": "NGN"})
    # Stable tokens whose units size the bid/ask trade (the first of base, target listed here;
    # else the base), and how many whole units that trade is (spec: about 100 stable units).
    size_symbols: tuple[str, ...] = ("USDT", "USDC")
    reference_size: Decimal = Field(default=Decimal(100), gt=0)
    window_s: float = Field(default=86400, gt=0)  # last_price/high/low/volumes: the last 24 h
    # How long /historical_trades can reach back: older fills leave the history file.
    keep_trades_s: float = Field(default=604800, gt=0)
    # While a firm quote reserves the makers' inventory of a side that prices at 0, the newest
    # cleared price is shown instead for at most this long (spec: up to 90 seconds).
    reserved_fallback_s: float = Field(default=90, ge=0)
    # A chain whose fill index has not reached its head for this long makes the feed a 502.
    index_max_lag_s: float = Field(default=5, gt=0)

    @model_validator(mode="after")
    def _published_symbols_are_symbols(self) -> FeedSettings:
        for symbol in self.published_symbols.values():
            if not symbol.isalnum() or not symbol.isupper() or not symbol.isascii():
                raise ValueError(f"feed.published_symbols: {symbol!r} is not an upper-case symbol")
        if self.keep_trades_s < self.window_s:
            # A fill forgotten inside the window would be counted twice if indexed again.
            raise ValueError(
                f"feed.keep_trades_s ({self.keep_trades_s:g}) is shorter than feed.window_s "
                f"({self.window_s:g}): the tape must hold at least the tickers' window"
            )
        return self


class RetentionSettings(StrictModel):
    # An RFQ record at rest (no_quote, filled, or expired/failed past the 24 h correction
    # window) is kept this much longer, then forgotten: GET answers 404 from then on.
    rfq_after_correction_s: float = Field(default=3600, ge=0)
    # An RFQ record at rest this long leaves memory for the history database (still read by
    # GET /v2/rfq/{id} and still corrected by a late fill); live records never leave memory.
    rfq_in_memory_s: float = Field(default=60, ge=0)
    # The in-memory event log's latest events (every event reaches the webhooks' outbox anyway;
    # the log is for looking at, so a short tail is enough).
    events_kept: int = Field(default=1_000, ge=0)
    # How often (service clock) lapsed state is swept: records, slots, reservations, limiter
    # windows, proof nonces and grants; a clock advance sweeps at once. Each sweep's work is
    # what fell due since the last one, so a short interval keeps each pause short.
    sweep_interval_s: float = Field(default=1, gt=0)


class BookSettings(StrictModel):
    """The v1 book: resting limit orders and the swaps composed of them (docs/decisions.md
    "v1 book")."""

    sweep_interval_s: float = Field(default=300, gt=0)  # limit-order sweep cadence (spec: 5 min)
    notify_lag_s: float = Field(default=600, ge=0)  # expired/cancelled events wait past deadline
    swap_ttl_s: float = Field(default=60, gt=0)  # a built swap holds its orders this long at most
    max_deadline_s: int = Field(default=365 * 86_400, gt=0)  # deadlines capped (about one year)


class StateSettings(StrictModel):
    # Where `rfqsim serve --state-dir` keeps the state across restarts (None: in memory only).
    dir: str | None = None
    # A reset or restore lets requests in flight finish for this long, then answers the rest
    # 503 (venue_unavailable, reason state_reset) so none of them writes into the new state.
    drain_s: float = Field(default=2.0, ge=0, le=60)
    # With a state directory: configuration changed since the last write (keys, limits, webhook
    # endpoints) goes to the history file this often, so a crash loses at most this much of it.
    durable_interval_s: float = Field(default=1.0, gt=0, le=3600)


class SharedSettings(StrictModel):
    # The engine several instances share state through (docs/scaling.md): redis://HOST:PORT/DB,
    # rediss://…, or unix:///PATH (Redis or Valkey). None: one instance, its state in memory.
    redis_url: str | None = Field(default=None, pattern=r"^(redis|rediss|unix)://")
    # Every key rfqsim writes there starts with this (several venues may share one server).
    key_prefix: str = Field(default="rfqsim:", min_length=1, max_length=64)
    # A record's copy at rest (docs/decisions.md SC19) stays on the engine this long; a live
    # one until it comes to rest. Past it, an RFQ of an instance gone is not found.
    copy_at_rest_s: float = Field(default=3600, gt=0)


class JournalSettings(StrictModel):
    enabled: bool = True  # GET /_sim/requests; off: nothing is recorded
    requests_kept: int = Field(default=1_000, ge=1, le=100_000)  # the ring's size
    frames_kept: int = Field(default=2_000, ge=1, le=100_000)  # maker stream frames kept
    # Requests and frames are kept in the history file this long (the rings: the newest).
    kept_s: float = Field(default=86_400, gt=0)


class TimelineSettings(StrictModel):
    # RFQs, v1 swaps, limit orders and ramp transfers whose timelines are kept in memory, each
    # (older ones are in the history file): GET /_sim/rfqs and its siblings, the console.
    kept: int = Field(default=10_000, ge=1, le=1_000_000)


class StreamSettings(StrictModel):
    # Readers of GET /_sim/stream (open console pages) at once; one more is answered 429.
    max_subscribers: int = Field(default=64, ge=1, le=10_000)
    # A reader with more than this waiting to be written to it (it stopped reading) is dropped.
    max_queued_kib: int = Field(default=1024, ge=1, le=1_048_576)


class CollectorSettings(StrictModel):
    # Who starts full garbage collections: `when_idle` (the simulator, after `idle_s` without a
    # request, or once the process grew by `memory_growth_mb`; CPython's own are off) or
    # `interpreter` (CPython's schedule). docs/performance.md "Hold a day" says why.
    full_collections: Literal["when_idle", "interpreter"] = "when_idle"
    idle_s: float = Field(default=2.0, gt=0)
    memory_growth_mb: float = Field(default=256, gt=0)


class Settings(BaseSettings):
    # A BaseSettings so pydantic-settings knows the RFQSIM_ names; the environment itself is read
    # once, by `load_settings`, at its place between the YAML file and the CLI flags.
    model_config = SettingsConfigDict(
        extra="forbid",
        frozen=True,
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
    )

    api: ApiSettings = ApiSettings()
    # Anvil port of the first configured chain; the next chains take the ports after it unless
    # they name their own `rpc_port`. 0: every chain without its own port on a free port.
    rpc_port: int = Field(default=DEFAULT_RPC_PORT, ge=0, le=65535)
    # True: the Anvil nodes rfqsim starts answer pages of any origin (CORS), for a browser
    # wallet that calls the RPC itself; false starts them with --no-cors (docs/security.md).
    rpc_cors: bool = False
    environment: Literal["staging", "production"] = "staging"
    seed: int = 0
    trusted_proxy: bool = False
    expiry_grace_s: float = Field(default=0, ge=0)  # quoted -> expired this long after expiresAt
    limits: LimitSettings = LimitSettings()
    proof: ProofTiming = ProofTiming()
    max_json_body_bytes: int = Field(default=1 << 20, gt=0)
    corridor_defaults: CorridorTiming = CorridorTiming()
    chains: tuple[ChainSettings, ...]  # the chains rfqsim runs (or attaches to) and deploys on
    # Chains known to the venue without a deployment: no node, no corridors (v1's 400 row).
    chains_without_contracts: tuple[ChainWithoutContractsSettings, ...] = ()
    # A chain node rfqsim started exits (killed, crashed): `stop` the simulator (exit status 1),
    # `restart` a node on the same port and redeploy the venue (the old chain's state is gone),
    # or `keep_serving` without it (health degraded, that chain's calls 502). Attached nodes
    # (rpc_url) are never started or stopped by rfqsim: health reports them, nothing else.
    on_chain_exit: Literal["stop", "restart", "keep_serving"] = "stop"
    retention: RetentionSettings = RetentionSettings()
    funding: FundingSettings = FundingSettings()
    webhooks: WebhookSettings = WebhookSettings()
    ramp: RampSettings = RampSettings()
    feed: FeedSettings = FeedSettings()
    idempotency: IdempotencySettings = IdempotencySettings()
    book: BookSettings = BookSettings()
    state: StateSettings = StateSettings()
    shared: SharedSettings = SharedSettings()
    journal: JournalSettings = JournalSettings()
    timelines: TimelineSettings = TimelineSettings()
    stream: StreamSettings = StreamSettings()
    collector: CollectorSettings = CollectorSettings()
    # The simulated maker fleet started with the simulator (None: no makers; `--no-makers`).
    makers: FleetConfig | None = Field(default_factory=default_fleet)
    # Where that fleet runs: `in` the simulator's process, or in a process of its `own` (a child
    # of `rfqsim serve`, driven over a control channel).
    makers_process: Literal["own", "in"] = "own"

    @model_validator(mode="after")
    def _unique_chains(self) -> Settings:
        ids = [c.chain_id for c in self.chains]
        ids += [c.chain_id for c in self.chains_without_contracts]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate chain_id in chains and chains_without_contracts")
        return self

    @model_validator(mode="after")
    def _distinct_ports(self) -> Settings:
        if self.rpc_port and self.rpc_port + len(self.chains) - 1 > 65535:
            raise ValueError(f"rpc_port {self.rpc_port}: no room for {len(self.chains)} chains")
        fixed: dict[int, str] = {}
        if self.api.port:
            fixed[self.api.port] = "the API"
        for chain in self.chains:
            port = self.anvil_port(chain.chain_id)
            if chain.rpc_url is not None or port == 0:
                continue
            if port in fixed:
                raise ValueError(f"chain {chain.chain_id} RPC port {port} is also {fixed[port]}'s")
            fixed[port] = f"chain {chain.chain_id} RPC"
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Constructing or validating Settings reads only what it is given: `load_settings` puts
        # the environment between the YAML file and the flags, where a person expects it.
        return (init_settings,)

    def anvil_port(self, chain_id: int) -> int:
        """The port rfqsim starts this chain's Anvil on (0: a free one)."""
        for index, chain in enumerate(self.chains):
            if chain.chain_id == chain_id:
                if chain.rpc_port is not None:
                    return chain.rpc_port
                return self.rpc_port + index if self.rpc_port else 0
        raise KeyError(chain_id)

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


def settings_from_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The `RFQSIM_*` variables that name a setting, as a nested mapping (pydantic-settings:
    `RFQSIM_API__PORT=9090` -> {"api": {"port": "9090"}}; JSON for lists and mappings). Other
    RFQSIM_ variables (RFQSIM_API_KEY for the conformance suite, ...) are not settings and are
    left alone."""
    source = EnvSettingsSource(
        Settings,
        case_sensitive=False,
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
    )
    if environ is not None:
        source.env_vars = {k.lower(): v for k, v in environ.items()}
    try:
        return dict(source())
    except Exception as exc:  # pydantic-settings' SettingsError: a value that is not JSON
        raise ValueError(f"environment: {exc}") from exc


def load_settings(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Defaults, then the YAML `config_file`, then the `RFQSIM_*` environment (`environ`, or the
    process's), then `overrides` (from CLI flags)."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_SETTINGS_FILE.read_text())
    if config_file is not None:
        loaded = yaml.safe_load(config_file.read_text()) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{config_file}: top level must be a mapping")
        data = _deep_merge(data, loaded)
    data = _deep_merge(data, settings_from_environment(environ))
    if overrides:
        data = _deep_merge(data, overrides)
    return Settings.model_validate(data)
