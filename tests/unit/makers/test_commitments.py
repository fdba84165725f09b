"""Commitments: the running totals per (chain, token) and the expiry heap agree with a plain scan
of the live commitments through adds, replacements, releases and sweeps."""

from __future__ import annotations

import random

import pytest

from makers.commitments import Commitment, Commitments

USDT, NGNS = "0x" + "a1" * 20, "0x" + "b2" * 20


def commitment(amount: int, expires: int, *, chain: int = 56, token: str = NGNS) -> Commitment:
    return Commitment(chain_id=chain, token=token, amount=amount, expires_at_ms=expires, nonce=1)


def scan(live: Commitments, chain: int, token: str) -> int:
    return sum(c.amount for c in live.values() if c.chain_id == chain and c.token == token)


def test_totals_follow_adds_and_releases() -> None:
    live = Commitments()
    assert live.total(56, NGNS) == 0
    live["q1"] = commitment(100, 1_000)
    live["q2"] = commitment(50, 2_000)
    live["q3"] = commitment(7, 1_500, token=USDT)
    live["q4"] = commitment(9, 1_500, chain=97)
    assert live.total(56, NGNS) == 150
    assert live.total(56, NGNS.upper().replace("0X", "0x")) == 150  # any address case
    assert live.total(56, USDT) == 7
    assert live.total(97, NGNS) == 9
    assert live.pop("q1") == commitment(100, 1_000)
    assert live.total(56, NGNS) == 50
    assert live.pop("q1", None) is None  # unknown: nothing changes
    del live["q2"]
    assert live.total(56, NGNS) == 0
    assert len(live) == 2
    assert sorted(live) == ["q3", "q4"]
    assert "q3" in live
    assert "q2" not in live
    with pytest.raises(KeyError):
        del live["q2"]


def test_replacing_a_quote_replaces_its_amount() -> None:
    live = Commitments()
    live["q"] = commitment(100, 1_000)
    live["q"] = commitment(30, 5_000)
    assert live.total(56, NGNS) == 30
    # The replaced commitment's heap entry lapses first, and must not drop the new one.
    assert live.sweep(now_ms=2_000) == []
    assert live.total(56, NGNS) == 30
    assert live.sweep(now_ms=5_001) == [commitment(30, 5_000)]
    assert live.total(56, NGNS) == 0
    assert not live


def test_sweep_drops_only_what_lapsed_past_the_grace() -> None:
    live = Commitments()
    live["early"] = commitment(10, 1_000)
    live["late"] = commitment(20, 3_000)
    live["released"] = commitment(40, 500)
    live.pop("released")
    assert live.sweep(now_ms=1_000, grace_ms=0) == []  # not yet strictly past
    assert live.sweep(now_ms=1_500, grace_ms=1_000) == []  # inside the grace
    assert live.sweep(now_ms=2_001, grace_ms=1_000) == [commitment(10, 1_000)]
    assert list(live) == ["late"]
    assert live.total(56, NGNS) == 20


def test_zero_amounts_do_not_break_the_totals() -> None:
    live = Commitments()
    live["a"] = commitment(0, 1_000)
    live["b"] = commitment(0, 1_000)
    del live["a"]
    del live["b"]
    assert live.total(56, NGNS) == 0


def test_released_entries_do_not_pile_up_in_the_heap() -> None:
    live = Commitments()
    for i in range(10_000):
        live[f"q{i}"] = commitment(1, 10**12 + i)  # far in the future: never swept
        del live[f"q{i}"]
    assert len(live._heap) <= 2 * len(live) + 65


def test_random_operations_agree_with_a_scan() -> None:
    rng = random.Random(7)
    live = Commitments()
    now = 0
    for step in range(5_000):
        action = rng.random()
        quote_id = f"q{rng.randrange(300)}"
        if action < 0.5:
            live[quote_id] = commitment(
                rng.randrange(1, 1_000),
                now + rng.randrange(0, 2_000),
                chain=rng.choice((56, 97)),
                token=rng.choice((USDT, NGNS)),
            )
        elif action < 0.8:
            live.pop(quote_id, None)
        else:
            now += rng.randrange(0, 500)
            for dropped in live.sweep(now, grace_ms=100):
                assert dropped.expires_at_ms + 100 < now
            assert all(c.expires_at_ms + 100 >= now for c in live.values())
        if step % 50 == 0:
            for chain in (56, 97):
                for token in (USDT, NGNS):
                    assert live.total(chain, token) == scan(live, chain, token)
