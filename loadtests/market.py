"""What the load asks for: the chain's RFQ corridors in both directions, a realistic size mix
in USD notional turned into atomic amounts of the named side, exact-input and exact-output.

The mix is the test corridor's: most requests are small (integrators smoke-testing, retail),
a thin tail is larger. USD prices come from the venue's own ladder at setup, so sizes stay
sensible when a simulator runs other mids."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# (band, weight, low USD, high USD): log-uniform inside a band.
SIZE_BANDS: tuple[tuple[str, int, float, float], ...] = (
    ("micro", 45, 0.01, 1.0),
    ("small", 35, 1.0, 20.0),
    ("medium", 15, 20.0, 100.0),
    ("large", 5, 100.0, 500.0),
)
EXACT_OUTPUT_SHARE = 0.2  # requests naming buyAmount instead of sellAmount

# Direction weights by (sell, buy) symbol; USDT/NGNS is the venue's main corridor.
DIRECTION_WEIGHTS: dict[tuple[str, str], int] = {
    ("USDT", "NGNS"): 28,
    ("NGNS", "USDT"): 24,
    ("USDC", "USDT"): 12,
    ("USDT", "USDC"): 12,
    ("WBNB", "USDT"): 12,
    ("USDT", "WBNB"): 12,
}
OTHER_DIRECTION_WEIGHT = 10
# Used when the ladder cannot price a token (no levels yet): the makers' default mids.
FALLBACK_USD: dict[str, float] = {"USDT": 1.0, "USDC": 1.0, "NGNS": 1 / 1600, "WBNB": 600.0}
USD_ANCHORS = ("USDT", "USDC")


@dataclass(frozen=True)
class MarketToken:
    symbol: str
    address: str
    decimals: int


@dataclass(frozen=True)
class Market:
    """The chain's tradeable directions and prices; JSON round-trips to workers."""

    chain_id: int
    tokens: dict[str, MarketToken]
    directions: tuple[tuple[str, str, int], ...]  # (sell, buy, weight)
    usd: dict[str, float]  # USD per whole token
    min_size: Decimal  # whole tokens of the named side

    def to_json(self) -> dict[str, Any]:
        return {
            "chain_id": self.chain_id,
            "tokens": {s: [t.address, t.decimals] for s, t in self.tokens.items()},
            "directions": [list(d) for d in self.directions],
            "usd": self.usd,
            "min_size": str(self.min_size),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Market:
        return cls(
            chain_id=int(data["chain_id"]),
            tokens={s: MarketToken(s, str(a), int(d)) for s, (a, d) in data["tokens"].items()},
            directions=tuple((str(s), str(b), int(w)) for s, b, w in data["directions"]),
            usd={s: float(p) for s, p in data["usd"].items()},
            min_size=Decimal(str(data["min_size"])),
        )

    def direction(self, rng: random.Random) -> tuple[MarketToken, MarketToken]:
        sell, buy, _ = rng.choices(self.directions, weights=[w for *_, w in self.directions])[0]
        return self.tokens[sell], self.tokens[buy]

    def atomic(self, token: MarketToken, usd: float) -> int:
        whole = max(Decimal(repr(usd / self.usd[token.symbol])), self.min_size)
        return int(whole.scaleb(token.decimals))

    def trade(self, rng: random.Random) -> tuple[dict[str, Any], str]:
        """A request body without taker (what preview takes) and the size band drawn."""
        sell, buy = self.direction(rng)
        band, usd = draw_usd(rng)
        body: dict[str, Any] = {
            "chainId": self.chain_id,
            "sellToken": sell.address,
            "buyToken": buy.address,
        }
        if rng.random() < EXACT_OUTPUT_SHARE:
            body["buyAmount"] = str(self.atomic(buy, usd))
        else:
            body["sellAmount"] = str(self.atomic(sell, usd))
        return body, band


def draw_usd(rng: random.Random) -> tuple[str, float]:
    band, _, low, high = rng.choices(SIZE_BANDS, weights=[b[1] for b in SIZE_BANDS])[0]
    return band, math.exp(rng.uniform(math.log(low), math.log(high)))


def _chain(info: dict[str, Any], chain_id: int) -> dict[str, Any]:
    for chain in info["chains"]:
        if int(chain["chain_id"]) == chain_id:
            return dict(chain)
    raise ValueError(f"the simulator serves no chain {chain_id}")


def usd_prices(tokens: dict[str, MarketToken], levels: dict[str, Any]) -> dict[str, float]:
    """USD per whole token from each pair's first ladder level, starting at the USD tokens."""
    by_address = {t.address.lower(): t for t in tokens.values()}
    rates: list[tuple[str, str, float]] = []  # (sell, buy, buy per sell in whole units)
    for pair in levels.get("pairs", []):
        given = by_address.get(str(pair["sellToken"]).lower())
        taken = by_address.get(str(pair["buyToken"]).lower())
        if given is None or taken is None or not pair.get("levels"):
            continue
        first = pair["levels"][0]
        given_whole = int(first["sellAmount"]) / 10**given.decimals
        taken_whole = int(first["buyAmount"]) / 10**taken.decimals
        if given_whole > 0 and taken_whole > 0:
            rates.append((given.symbol, taken.symbol, taken_whole / given_whole))
    usd = {s: 1.0 for s in USD_ANCHORS if s in tokens}
    changed = True
    while changed:
        changed = False
        for sell, buy, rate in rates:
            if sell in usd and buy not in usd:
                usd[buy] = usd[sell] / rate
                changed = True
            elif buy in usd and sell not in usd:
                usd[sell] = usd[buy] * rate
                changed = True
    for symbol in tokens:
        usd.setdefault(symbol, FALLBACK_USD.get(symbol, 1.0))
    return usd


def build_market(info: dict[str, Any], levels: dict[str, Any], chain_id: int) -> Market:
    """The market of ``chain_id`` from ``/_sim/info`` and ``GET /v2/rfq/levels``."""
    chain = _chain(info, chain_id)
    tokens = {
        str(t["symbol"]): MarketToken(str(t["symbol"]), str(t["address"]), int(t["decimals"]))
        for t in chain["tokens"]
    }
    by_address = {t.address.lower(): t.symbol for t in tokens.values()}
    directions: list[tuple[str, str, int]] = []
    for corridor in chain["corridors"]:
        if corridor.get("mode", "RFQ") != "RFQ":
            continue
        base = by_address[str(corridor["base"]).lower()]
        quote = by_address[str(corridor["quote"]).lower()]
        for sell, buy in ((base, quote), (quote, base)):
            weight = DIRECTION_WEIGHTS.get((sell, buy), OTHER_DIRECTION_WEIGHT)
            directions.append((sell, buy, weight))
    if not directions:
        raise ValueError(f"chain {chain_id} has no RFQ corridor")
    return Market(
        chain_id=chain_id,
        tokens=tokens,
        directions=tuple(directions),
        usd=usd_prices(tokens, levels),
        min_size=Decimal(str(chain.get("min_size", "0"))),
    )


def reply_budget_ms(info: dict[str, Any], chain_id: int) -> list[int]:
    """The RFQ corridors' configured reply budgets on ``chain_id`` (for the summary)."""
    chain = _chain(info, chain_id)
    return sorted(
        {int(c["reply_budget_ms"]) for c in chain["corridors"] if c.get("mode", "RFQ") == "RFQ"}
    )
