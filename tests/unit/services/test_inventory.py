"""Maker inventory holds: what a maker has committed per token is the sum of its live holds,
through holds, replacements, releases, auction losses and lapses at expiresAt."""

from __future__ import annotations

import random

from simulator.clock import Clock
from simulator.services.rfq.inventory import MakerHold, MakerInventory

MAKERS = ("0xaa", "0xbb")
TOKENS = ("0x01", "0x02")


class StoppedClock(Clock):
    def __init__(self) -> None:
        super().__init__()
        self.at = 1_000.0

    def time(self) -> float:
        return self.at


def brute_force(live: dict[str, MakerHold], now: float, maker: str, token: str) -> int:
    return sum(
        h.amount
        for h in live.values()
        if h.maker == maker and h.token == token and h.until > now and h.chain_id == 97
    )


def test_committed_is_the_sum_of_live_holds_through_every_change() -> None:
    clock = StoppedClock()
    inventory = MakerInventory(clock)
    rng = random.Random(7)
    live: dict[str, MakerHold] = {}
    for step in range(3000):
        action = rng.random()
        if action < 0.5 or not live:
            quote_id = f"q{rng.randrange(400)}"  # sometimes an id already held: a replacement
            hold = MakerHold(
                rfq_id=f"rfq{rng.randrange(100)}",
                quote_id=quote_id,
                chain_id=97,
                maker=rng.choice(MAKERS),
                token=rng.choice(TOKENS),
                amount=rng.randrange(1, 10**6),
                nonce=step,
                until=clock.at + rng.uniform(1, 60),
                sell_token="0x09",
            )
            inventory.hold(hold)
            live[quote_id] = hold
        elif action < 0.7:
            quote_id = rng.choice(sorted(live))
            inventory.release_quote(quote_id)
            del live[quote_id]
        elif action < 0.8:
            rfq_id = rng.choice(sorted(live.values(), key=lambda h: h.quote_id)).rfq_id
            inventory.release_rfq(rfq_id)
            live = {q: h for q, h in live.items() if h.rfq_id != rfq_id}
        else:
            clock.at += rng.uniform(0, 5)  # some holds lapse
        for maker in MAKERS:
            for token in TOKENS:
                expected = brute_force(live, clock.at, maker, token)
                assert inventory.committed(97, maker, token) == expected, step
