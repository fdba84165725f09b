"""Reply-latency distributions of simulated makers (WireMock-style delay distributions).

Every draw comes from a caller-supplied random source so a seeded run reproduces its latencies:
`random.Random` fits, and so does the simulator's `RandomSource` (anything with `random()`,
`uniform(a, b)` and `lognormvariate(mu, sigma)`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Protocol, TypeAlias

# z-score of the 99th percentile of a standard normal (about 2.3263).
Z99 = NormalDist().inv_cdf(0.99)


class RandomLike(Protocol):
    """The part of `random.Random` the makers draw from."""

    def random(self) -> float: ...

    def uniform(self, a: float, b: float, /) -> float: ...

    def lognormvariate(self, mu: float, sigma: float, /) -> float: ...


@dataclass(frozen=True)
class FixedLatency:
    """Always `ms` milliseconds."""

    ms: float

    def __post_init__(self) -> None:
        if not self.ms >= 0:
            raise ValueError(f"fixed latency must be >= 0 ms, got {self.ms}")

    def sample_ms(self, rng: RandomLike) -> float:
        return self.ms


@dataclass(frozen=True)
class UniformLatency:
    """Uniform between `lo_ms` and `hi_ms`."""

    lo_ms: float
    hi_ms: float

    def __post_init__(self) -> None:
        if not 0 <= self.lo_ms <= self.hi_ms:
            raise ValueError(f"uniform latency needs 0 <= lo <= hi, got {self.lo_ms}..{self.hi_ms}")

    def sample_ms(self, rng: RandomLike) -> float:
        return rng.uniform(self.lo_ms, self.hi_ms)


@dataclass(frozen=True)
class LogNormalLatency:
    """Log-normal with the given median and 99th percentile (the long right tail of real
    makers): mu = ln(p50), sigma = (ln(p99) - ln(p50)) / z(0.99)."""

    p50_ms: float
    p99_ms: float

    def __post_init__(self) -> None:
        if not 0 < self.p50_ms <= self.p99_ms:
            raise ValueError(
                f"lognormal latency needs 0 < p50 <= p99, got p50={self.p50_ms} p99={self.p99_ms}"
            )

    @property
    def mu(self) -> float:
        return math.log(self.p50_ms)

    @property
    def sigma(self) -> float:
        return (math.log(self.p99_ms) - math.log(self.p50_ms)) / Z99

    def sample_ms(self, rng: RandomLike) -> float:
        if self.sigma == 0:
            return self.p50_ms
        return rng.lognormvariate(self.mu, self.sigma)


Latency: TypeAlias = FixedLatency | UniformLatency | LogNormalLatency


def sample_seconds(latency: Latency, rng: RandomLike) -> float:
    """One draw in seconds (what asyncio.sleep takes)."""
    return latency.sample_ms(rng) / 1000.0
