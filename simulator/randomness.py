"""The one seeded random source: ids, prices and latencies come from here so `--seed` reproduces a
run. Secrets (claim tokens, API key secrets, webhook signing secrets) deliberately do NOT: they use
the operating system's CSPRNG, because a reproducible secret is no secret."""

from __future__ import annotations

import random
import secrets
from random import Random


class RandomSource:
    """`instance` tells apart the instances of one venue sharing state (docs/scaling.md): each
    draws its own streams, so two never make the same RFQ id; instance 0, the only one of a
    single process, draws exactly what the seed alone gives."""

    def __init__(self, seed: int, instance: int = 0) -> None:
        self.seed = seed
        self.instance = instance
        # the only PRNG state in the simulator
        self._random = random.Random(seed if instance == 0 else f"{seed}/{instance}")
        self._forks: dict[str, RandomSource] = {}  # by label: their streams are state too

    def hex(self, nbytes: int) -> str:
        return self._random.getrandbits(nbytes * 8).to_bytes(nbytes, "big").hex()

    def new_id(self, prefix: str, nbytes: int = 12) -> str:
        """`<prefix>_<hex>`, e.g. rfq_3f2a…: unique in practice, reproducible per seed."""
        return f"{prefix}_{self.hex(nbytes)}"

    def uniform(self, low: float, high: float) -> float:
        return self._random.uniform(low, high)

    def lognormvariate(self, mu: float, sigma: float) -> float:
        return self._random.lognormvariate(mu, sigma)

    def random(self) -> float:
        return self._random.random()

    def choice(self, options: list[str]) -> str:
        return self._random.choice(options)

    def fork(self, label: str) -> RandomSource:
        """An independent stream for one component, derived from the seed and a label, so adding
        draws in one component does not shift the numbers another one sees."""
        salt = (
            f"{self.seed}:{label}" if self.instance == 0 else f"{self.seed}/{self.instance}:{label}"
        )
        fork = RandomSource(random.Random(salt).getrandbits(64))
        self._forks[label] = fork  # the latest fork of a label is the one in use
        return fork

    def streams(self) -> dict[str, Random]:
        """Every stream by path ("", "webhooks", "ramp/x", ...): what reset and snapshots put
        back, so the numbers drawn after a reset are those drawn after start-up."""
        found = {"": self._random}
        for label, fork in self._forks.items():
            found.update({f"{label}/{path}".rstrip("/"): r for path, r in fork.streams().items()})
        return found


def secret_token(prefix: str, nbytes: int = 32) -> str:
    """High-entropy secret from the OS CSPRNG, URL-safe."""
    return f"{prefix}{secrets.token_urlsafe(nbytes)}"
