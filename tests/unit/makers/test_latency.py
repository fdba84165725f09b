"""Latency distributions: percentiles over 10k seeded draws."""

from __future__ import annotations

import random
import statistics

import pytest

from makers.latency import (
    FixedLatency,
    LogNormalLatency,
    UniformLatency,
    sample_seconds,
)
from simulator.randomness import RandomSource

DRAWS = 10_000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def test_fixed_is_constant() -> None:
    rng = random.Random(1)
    latency = FixedLatency(15)
    assert {latency.sample_ms(rng) for _ in range(100)} == {15}
    assert sample_seconds(latency, rng) == 0.015


def test_uniform_stays_in_bounds_and_centres() -> None:
    rng = random.Random(2)
    draws = [UniformLatency(250, 550).sample_ms(rng) for _ in range(DRAWS)]
    assert min(draws) >= 250
    assert max(draws) <= 550
    assert statistics.median(draws) == pytest.approx(400, rel=0.03)


@pytest.mark.parametrize(("p50", "p99"), [(40, 200), (5, 20), (100, 1000)])
def test_lognormal_hits_its_p50_and_p99(p50: float, p99: float) -> None:
    rng = random.Random(3)
    latency = LogNormalLatency(p50, p99)
    draws = [latency.sample_ms(rng) for _ in range(DRAWS)]
    assert percentile(draws, 0.50) == pytest.approx(p50, rel=0.05)
    assert percentile(draws, 0.99) == pytest.approx(p99, rel=0.15)
    assert min(draws) > 0


def test_lognormal_with_equal_percentiles_is_fixed() -> None:
    assert LogNormalLatency(30, 30).sample_ms(random.Random(0)) == 30


def test_same_seed_same_draws_and_the_simulator_source_fits() -> None:
    latency = LogNormalLatency(40, 200)
    first = [latency.sample_ms(random.Random(7)) for _ in range(3)]
    again = [latency.sample_ms(random.Random(7)) for _ in range(3)]
    assert first == again
    source = RandomSource(7)  # the simulator's seeded source is accepted as is
    assert latency.sample_ms(source) > 0
    assert 250 <= UniformLatency(250, 550).sample_ms(source) <= 550


@pytest.mark.parametrize(
    "make",
    [
        lambda: FixedLatency(-1),
        lambda: UniformLatency(10, 5),
        lambda: LogNormalLatency(0, 10),
        lambda: LogNormalLatency(50, 40),
    ],
)
def test_invalid_parameters_are_refused(make: object) -> None:
    with pytest.raises(ValueError, match="latency"):
        make()  # type: ignore[operator]
