"""Fleet configuration: the default fleet, YAML loading and validation."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from pydantic import ValidationError

from makers.config import (
    FixedLatencyConfig,
    FleetConfig,
    LogNormalLatencyConfig,
    MakerConfig,
    default_fleet,
    load_fleet_config,
)
from makers.latency import FixedLatency, LogNormalLatency, UniformLatency
from rfqkit.wallets import maker_wallet
from simulator.settings import load_settings


def test_default_fleet_has_four_distinct_makers_on_every_default_chain() -> None:
    fleet = default_fleet()
    settings = load_settings()
    for chain in settings.chains:
        serving = [m for m in fleet.makers if chain.chain_id in m.chains]
        assert len(serving) >= 4
    names = [m.name for m in fleet.makers]
    assert names == ["alpha", "bravo", "charlie", "delta"]
    # One funded maker wallet each.
    assert [m.wallet().address for m in fleet.makers] == [
        maker_wallet(i).address for i in range(settings.funding.makers)
    ]
    by_name = {m.name: m for m in fleet.makers}
    assert isinstance(by_name["alpha"].latency_model(), FixedLatency)
    assert by_name["bravo"].latency_model() == LogNormalLatency(40, 200)
    assert by_name["charlie"].max_inventory_fraction == 1
    assert by_name["charlie"].spread_bps > by_name["alpha"].spread_bps
    delta = by_name["delta"]
    assert delta.behaviour == "flaky"
    latency = delta.latency_model()
    assert isinstance(latency, UniformLatency)
    assert latency.hi_ms < 750  # slow but inside the default reply budget


def test_pricing_params_merge_mids_exactly() -> None:
    maker = MakerConfig(name="m", wallet_index=0, mids={"NGNS/USDT": Decimal("0.000625")})
    params = maker.pricing_params({"USDT/NGNS": Decimal(1550), "WBNB/USDT": Decimal(610)})
    assert params.mid("USDT", "NGNS") == 1600  # the maker's own, inverted: 1 / 0.000625
    assert "USDT/NGNS" not in params.mids  # the override in the other orientation wins
    assert params.mid("WBNB", "USDT") == 610
    assert params.mid("USDC", "USDT") == 1
    assert params.spread_bps == Fraction(10)


def test_yaml_loads_with_exact_decimals(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(
        """
mids: {"USDT/NGNS": 1600.5}
seed: 4
makers:
  - name: one
    wallet_index: 2
    chains: [97]
    spread_bps: 12.5
    mids: {"WBNB/USDT": 0.1}
    max_inventory_fraction: 0.2
    latency: {kind: lognormal, p50_ms: 40, p99_ms: 200}
    behaviour: late
  - name: two
    private_key: "0x%s"
    latency: {kind: uniform, lo_ms: 1, hi_ms: 2}
    online: false
"""
        % ("ab" * 32),
        encoding="utf-8",
    )
    fleet = load_fleet_config(path)
    one, two = fleet.makers
    assert fleet.mids["USDT/NGNS"] == Decimal("1600.5")
    assert one.mids["WBNB/USDT"] == Decimal("0.1")  # not 0.1000000000000000055…
    assert one.pricing_params().mid("WBNB", "USDT") == Fraction(1, 10)
    assert one.spread_bps == Decimal("12.5")
    assert one.latency == LogNormalLatencyConfig(p50_ms=40, p99_ms=200)
    assert one.behaviour == "late"
    assert two.wallet().private_key == "0x" + "ab" * 32
    assert two.wallet().label == "two"
    assert not two.online
    assert fleet.seed == 4


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ({"name": "x"}, "exactly one of wallet_index"),
        ({"name": "x", "wallet_index": 0, "private_key": "0x" + "11" * 32}, "exactly one"),
        ({"name": "X", "wallet_index": 0}, "pattern"),
        ({"name": "x", "wallet_index": 0, "behaviour": "sleepy"}, "behaviour"),
        ({"name": "x", "wallet_index": 0, "mids": {"USDT-NGNS": 1}}, "BASE/QUOTE"),
        ({"name": "x", "wallet_index": 0, "mids": {"USDT/NGNS": 0}}, "positive"),
        ({"name": "x", "wallet_index": 0, "max_inventory_fraction": 0}, "greater than 0"),
        (
            {
                "name": "x",
                "wallet_index": 0,
                "latency": {"kind": "uniform", "lo_ms": 5, "hi_ms": 1},
            },
            "lo_ms",
        ),
        ({"name": "x", "wallet_index": 0, "latency": {"kind": "pareto"}}, "kind"),
        ({"name": "x", "wallet_index": 0, "surprise": 1}, "Extra inputs"),
    ],
)
def test_invalid_maker_configs_are_refused(body: dict[str, object], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        MakerConfig.model_validate(body)


def test_fleet_refuses_duplicate_names_and_shared_wallets() -> None:
    one = MakerConfig(name="a", wallet_index=0, latency=FixedLatencyConfig(ms=1))
    with pytest.raises(ValidationError, match="unique"):
        FleetConfig(makers=(one, one))
    with pytest.raises(ValidationError, match="share a wallet"):
        FleetConfig(makers=(one, one.model_copy(update={"name": "b"})))
    assert default_fleet().maker("bravo").wallet_index == 1
    with pytest.raises(KeyError):
        default_fleet().maker("zulu")
