"""Fleet configuration: the YAML a person writes for `rfqsim makers run --config FILE`.

pydantic at this edge only; the fleet reads the validated values as attributes. Example::

    mids: {"USDT/NGNS": 1600, "USDC/USDT": 1, "WBNB/USDT": 600}
    makers:
      - name: alpha
        wallet_index: 0                  # rfqkit.wallets.maker_wallet(0); or private_key: 0x…
        chains: [56, 97]
        spread_bps: 8                    # total; half each side of the mid
        impact_bps: 5                    # extra bps at impact_reference_usd of size
        max_inventory_fraction: 0.3      # show 30% of what it holds
        latency: {kind: fixed, ms: 15}
        behaviour: normal
      - name: delta
        wallet_index: 3
        latency: {kind: uniform, lo_ms: 250, hi_ms: 550}
        behaviour: flaky
        flaky_decline_fraction: 0.3

Prices are exact: write mids and bps as YAML numbers or strings ("0.000625"); floats are read
through their shortest decimal form, never their binary value.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import yaml
from eth_account import Account
from pydantic import Field, field_validator, model_validator

from makers.latency import FixedLatency, Latency, LogNormalLatency, UniformLatency
from makers.pricing import DEFAULT_MIDS, DEFAULT_USD_TOKENS, PricingParams, to_fraction
from rfqkit.config_model import StrictModel
from rfqkit.wallets import Wallet, maker_wallet

Behaviour = Literal["normal", "silent", "late", "decline", "bad_signature", "underfunded", "flaky"]
BEHAVIOURS: tuple[Behaviour, ...] = (
    "normal",
    "silent",
    "late",
    "decline",
    "bad_signature",
    "underfunded",
    "flaky",
)
PAIR_PATTERN = r"^[A-Z][A-Z0-9]{1,10}/[A-Z][A-Z0-9]{1,10}$"


class FixedLatencyConfig(StrictModel):
    kind: Literal["fixed"] = "fixed"
    ms: float = Field(ge=0, le=60_000)


class UniformLatencyConfig(StrictModel):
    kind: Literal["uniform"] = "uniform"
    lo_ms: float = Field(ge=0, le=60_000)
    hi_ms: float = Field(ge=0, le=60_000)

    @model_validator(mode="after")
    def _ordered(self) -> UniformLatencyConfig:
        if self.lo_ms > self.hi_ms:
            raise ValueError("uniform latency: lo_ms must not exceed hi_ms")
        return self


class LogNormalLatencyConfig(StrictModel):
    kind: Literal["lognormal"] = "lognormal"
    p50_ms: float = Field(gt=0, le=60_000)
    p99_ms: float = Field(gt=0, le=600_000)

    @model_validator(mode="after")
    def _ordered(self) -> LogNormalLatencyConfig:
        if self.p50_ms > self.p99_ms:
            raise ValueError("lognormal latency: p50_ms must not exceed p99_ms")
        return self


LatencyConfig: TypeAlias = Annotated[
    FixedLatencyConfig | UniformLatencyConfig | LogNormalLatencyConfig,
    Field(discriminator="kind"),
]


def build_latency(config: LatencyConfig) -> Latency:
    if isinstance(config, FixedLatencyConfig):
        return FixedLatency(config.ms)
    if isinstance(config, UniformLatencyConfig):
        return UniformLatency(config.lo_ms, config.hi_ms)
    return LogNormalLatency(config.p50_ms, config.p99_ms)


class BookOrdersConfig(StrictModel):
    """Resting v1 limit orders a maker keeps on every BOOK corridor it serves, in both
    directions, through the v1 API (prepare, sign, submit): a small ladder of asks beyond the
    mid, re-posted as they fill or expire.

    - `per_side`: orders kept per direction.
    - `spread_bps`: the best order asks this much more than the mid (it must stay above the
      filling operator's edge, or the operator would take it at once).
    - `step_bps`: each further order asks this much more again.
    - `size_usd`: each order's size, valued through the mids (jittered ±20 %).
    - `ttl_s`: each order's deadline (the spec's suggested TTL for bot orders is 10 minutes).
    - `refresh_s`: how often the maker checks its orders and tops them up."""

    per_side: int = Field(default=3, ge=1, le=50)
    spread_bps: Decimal = Field(default=Decimal(40), ge=0, le=5000)
    step_bps: Decimal = Field(default=Decimal(10), ge=0, le=1000)
    size_usd: Decimal = Field(default=Decimal(100), gt=0)
    ttl_s: int = Field(default=600, ge=60, le=365 * 86_400)
    refresh_s: float = Field(default=20, gt=0, le=3600)


def _mids(value: Any) -> Any:
    # YAML floats (0.000625) would become binary-noisy Decimals; go through repr instead.
    if isinstance(value, dict):
        return {k: Decimal(repr(v)) if isinstance(v, float) else v for k, v in value.items()}
    return value


class MakerConfig(StrictModel):
    """One simulated maker.

    - `name`: unique in the fleet; also the key name created for it.
    - `wallet_index` (→ `rfqkit.wallets.maker_wallet(i)`, funded by the simulator) or
      `private_key`: exactly one. The wallet signs orders and holds the inventory.
    - `chains`: chain ids it serves (each needs a credential of that chain's environment).
    - `spread_bps`: total spread around the mid, half applied to each side.
    - `impact_bps`, `impact_reference_usd`, `impact_exponent`, `max_impact_bps`: the depth
      curve, extra bps = impact_bps * (size_usd / impact_reference_usd) ** exponent, up to
      max_impact_bps (the curve's end).
    - `mids`: per pair symbol ("USDT/NGNS": 1600 = NGNS per USDT), over the fleet's mids.
    - `max_inventory_fraction`: share of its available inventory it shows and will trade.
    - `latency`: `{kind: fixed, ms}`, `{kind: uniform, lo_ms, hi_ms}` or
      `{kind: lognormal, p50_ms, p99_ms}`: time from an rfq to its answer.
    - `behaviour`: normal | silent (never answers) | late (answers after replyBy) | decline
      (always: liquidity, with a maxSellAmount) | bad_signature (signs with a wrong key) |
      underfunded (quotes `underfunded_factor` times what it holds) | flaky (declines
      `flaky_decline_fraction` of rfqs as unavailable).
    - `quote_ttl_ms`: expiresAt = replyBy + this, within the rfq's bounds (None: the maximum).
    - `deadline_slack_s`: the order's on-chain deadline is this long after expiresAt.
    - `online`: connected at start (the fleet can toggle it live).
    - `fills_book`: a filling operator of the v1 book: its credential carries `maker:fill`, it
      publishes its levels on BOOK corridors too (its standing bid), and every
      `fill_interval_ms` it fills, through the v1 API and a real transaction, every resting
      order priced at or better than its own price for that size.
    - `book_orders`: resting v1 orders it keeps on BOOK corridors (BookOrdersConfig).
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")
    wallet_index: int | None = Field(default=None, ge=0, le=1000)
    private_key: str | None = Field(default=None, pattern=r"^0x[0-9a-fA-F]{64}$", repr=False)
    chains: tuple[int, ...] = Field(default=(56, 97), min_length=1)
    spread_bps: Decimal = Field(default=Decimal(10), ge=0, le=5000)
    impact_bps: Decimal = Field(default=Decimal(10), ge=0, le=2500)
    impact_reference_usd: Decimal = Field(default=Decimal(1_000_000), gt=0)
    impact_exponent: int = Field(default=1, ge=1, le=4)
    max_impact_bps: Decimal = Field(default=Decimal(1000), ge=0, le=2500)
    mids: dict[str, Decimal] = Field(default_factory=dict)
    max_inventory_fraction: Decimal = Field(default=Decimal(1), gt=0, le=1)
    latency: LatencyConfig = FixedLatencyConfig(ms=10)
    behaviour: Behaviour = "normal"
    flaky_decline_fraction: float = Field(default=0.3, ge=0, le=1)
    underfunded_factor: Decimal = Field(default=Decimal(10), gt=1)
    quote_ttl_ms: int | None = Field(default=None, gt=0)
    deadline_slack_s: int = Field(default=60, ge=0, le=7 * 86_400)
    online: bool = True
    fills_book: bool = False
    fill_interval_ms: int = Field(default=1000, ge=100, le=60_000)
    book_orders: BookOrdersConfig | None = None

    _normalise_mids = field_validator("mids", mode="before")(_mids)

    @field_validator("mids")
    @classmethod
    def _pair_keys(cls, value: dict[str, Decimal]) -> dict[str, Decimal]:
        return _check_mids(value)

    @model_validator(mode="after")
    def _one_wallet(self) -> MakerConfig:
        if (self.wallet_index is None) == (self.private_key is None):
            raise ValueError(f"maker {self.name}: give exactly one of wallet_index, private_key")
        return self

    def wallet(self) -> Wallet:
        if self.wallet_index is not None:
            return maker_wallet(self.wallet_index)
        assert self.private_key is not None
        return Wallet(
            label=self.name,
            address=Account.from_key(self.private_key).address,
            private_key=self.private_key,
        )

    def pricing_params(
        self,
        fleet_mids: dict[str, Decimal] | None = None,
        usd_tokens: frozenset[str] = DEFAULT_USD_TOKENS,
    ) -> PricingParams:
        mids: dict[str, Fraction] = dict(DEFAULT_MIDS)
        for source in (fleet_mids or {}, self.mids):
            for pair, mid in source.items():
                base, quote = pair.split("/")
                mids.pop(f"{quote}/{base}", None)  # an override in either orientation wins
                mids[pair] = to_fraction(mid)
        return PricingParams(
            mids=mids,
            spread_bps=to_fraction(self.spread_bps),
            impact_bps=to_fraction(self.impact_bps),
            impact_reference_usd=to_fraction(self.impact_reference_usd),
            impact_exponent=self.impact_exponent,
            max_impact_bps=to_fraction(self.max_impact_bps),
            max_inventory_fraction=to_fraction(self.max_inventory_fraction),
            usd_tokens=usd_tokens,
        )

    def latency_model(self) -> Latency:
        return build_latency(self.latency)


def _check_mids(value: dict[str, Decimal]) -> dict[str, Decimal]:
    for pair, mid in value.items():
        if not re.match(PAIR_PATTERN, pair):
            raise ValueError(f"mid key {pair!r} must look like BASE/QUOTE, e.g. USDT/NGNS")
        if mid <= 0:
            raise ValueError(f"mid {pair} must be positive")
    return value


def _default_mids() -> dict[str, Decimal]:
    return {k: Decimal(v.numerator) / Decimal(v.denominator) for k, v in DEFAULT_MIDS.items()}


class FleetConfig(StrictModel):
    """The whole fleet: shared mids (overridden per maker), USD tokens for sizing the depth
    curve, the levels publish interval, an optional seed (None: OS entropy) and the makers."""

    mids: dict[str, Decimal] = Field(default_factory=lambda: _default_mids())
    usd_tokens: tuple[str, ...] = tuple(sorted(DEFAULT_USD_TOKENS))
    publish_interval_ms: int = Field(default=1000, ge=50, le=60_000)
    balance_refresh_ms: int = Field(default=5000, ge=100, le=600_000)
    # The v1 API calls of the book roles leave from this loopback address when the simulator is
    # on loopback, so they count against a per-IP backstop of their own, not the callers' one.
    v1_source_address: str | None = Field(default="127.0.0.2", pattern=r"^127\.[0-9.]+$")
    seed: int | None = None
    makers: tuple[MakerConfig, ...] = Field(min_length=1)

    _normalise_mids = field_validator("mids", mode="before")(_mids)

    @field_validator("mids")
    @classmethod
    def _pair_keys(cls, value: dict[str, Decimal]) -> dict[str, Decimal]:
        return _check_mids(value)

    @model_validator(mode="after")
    def _unique(self) -> FleetConfig:
        names = [m.name for m in self.makers]
        if len(set(names)) != len(names):
            raise ValueError("maker names must be unique")
        wallets = [m.wallet().address for m in self.makers]
        if len(set(wallets)) != len(wallets):
            raise ValueError("two makers share a wallet (one stream connection per credential)")
        return self

    def maker(self, name: str) -> MakerConfig:
        for maker in self.makers:
            if maker.name == name:
                return maker
        raise KeyError(name)


def load_fleet_config(path: Path) -> FleetConfig:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: top level must be a mapping")
    return FleetConfig.model_validate(data)


def default_fleet() -> FleetConfig:
    """Four makers on every default chain (56 and 97), one per funded maker wallet:

    | name    | wallet | behaviour        | latency (ms)             | spread | impact | shows |
    |---------|--------|------------------|--------------------------|--------|--------|-------|
    | alpha   | 0      | normal           | fixed 15                 | 8 bps  | 5 bps  | 30 %  |
    | bravo   | 1      | normal           | lognormal p50 40 p99 200 | 16 bps | 10 bps | 30 %  |
    | charlie | 2      | normal, deep     | lognormal p50 60 p99 250 | 40 bps | 20 bps | 100 % |
    | delta   | 3      | flaky, 30 % decl | uniform 250-550          | 20 bps | 10 bps | 20 %  |

    (impact: extra bps at a $1M trade, linear in size; shows: max_inventory_fraction.)
    alpha and bravo are tight but shallow; charlie holds the depth at a wider price, so a large
    size is best filled by combining them; delta is slow-but-in-budget and sometimes declines.

    The v1 book: alpha is the filling operator (`fills_book`); bravo and charlie keep three
    resting asks per direction on every BOOK corridor (`book_orders`), 40 and 60 bps beyond the
    mid, so they rest rather than cross alpha's bid.
    """
    return FleetConfig(
        makers=(
            MakerConfig(
                name="alpha",
                wallet_index=0,
                spread_bps=Decimal(8),
                impact_bps=Decimal(5),
                max_inventory_fraction=Decimal("0.3"),
                latency=FixedLatencyConfig(ms=15),
                fills_book=True,
            ),
            MakerConfig(
                name="bravo",
                wallet_index=1,
                spread_bps=Decimal(16),
                impact_bps=Decimal(10),
                max_inventory_fraction=Decimal("0.3"),
                latency=LogNormalLatencyConfig(p50_ms=40, p99_ms=200),
                book_orders=BookOrdersConfig(spread_bps=Decimal(40)),
            ),
            MakerConfig(
                name="charlie",
                wallet_index=2,
                spread_bps=Decimal(40),
                impact_bps=Decimal(20),
                max_inventory_fraction=Decimal(1),
                latency=LogNormalLatencyConfig(p50_ms=60, p99_ms=250),
                book_orders=BookOrdersConfig(spread_bps=Decimal(60), size_usd=Decimal(150)),
            ),
            MakerConfig(
                name="delta",
                wallet_index=3,
                spread_bps=Decimal(20),
                impact_bps=Decimal(10),
                max_inventory_fraction=Decimal("0.2"),
                latency=UniformLatencyConfig(lo_ms=250, hi_ms=550),
                behaviour="flaky",
                flaky_decline_fraction=0.3,
            ),
        )
    )
