"""What one simulated maker did, counted (GET /_sim/makers shows it per maker)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class MakerStats:
    rfqs: int = 0
    quotes: int = 0
    declines: Counter[str] = field(default_factory=Counter)
    silent: int = 0
    filled: int = 0
    expired: int = 0
    released: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rfqs": self.rfqs,
            "quotes": self.quotes,
            "declines": dict(self.declines),
            "silent": self.silent,
            "filled": self.filled,
            "expired": self.expired,
            "released": dict(self.released),
            "errors": dict(self.errors),
        }
