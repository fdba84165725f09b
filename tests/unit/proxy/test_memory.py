"""The proxy's memory across exchanges stays bounded: entries lapse at their lifetime, the least
recently set go first beyond the capacity, and replaced lifetimes do not pile up."""

from __future__ import annotations

from rfqsim.proxy.memory import ExpiringMap


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_entry_lapses_at_its_lifetime_and_is_swept_on_a_later_write() -> None:
    clock = Clock()
    memory: ExpiringMap[str, int] = ExpiringMap(100, clock)
    memory.set("a", 1, 10.0)
    memory.set("b", 2, 20.0)
    clock.now += 10.0
    assert memory.get("a") is None, "lapsed at its lifetime"
    assert memory.get("b") == 2
    memory.set("c", 3, 5.0)
    assert len(memory) == 2, "the lapsed entry is gone after the next write"


def test_a_later_set_replaces_the_lifetime() -> None:
    clock = Clock()
    memory: ExpiringMap[str, int] = ExpiringMap(100, clock)
    memory.set("a", 1, 10.0)
    clock.now += 9.0
    memory.set("a", 2, 10.0)
    clock.now += 9.0
    memory.set("z", 0, 1.0)
    assert memory.get("a") == 2


def test_beyond_its_capacity_the_least_recently_set_go_first() -> None:
    memory: ExpiringMap[int, int] = ExpiringMap(3, Clock())
    for key in range(3):
        memory.set(key, key, 60.0)
    memory.set(0, 0, 60.0)  # touched again: now the most recent
    memory.set(3, 3, 60.0)
    assert memory.get(1) is None
    assert [memory.get(k) for k in (0, 2, 3)] == [0, 2, 3]
    assert len(memory) == 3
    assert memory.evicted == 1


def test_a_long_run_of_replaced_lifetimes_stays_small() -> None:
    clock = Clock()
    memory: ExpiringMap[int, int] = ExpiringMap(1000, clock)
    for step in range(200_000):
        memory.set(step % 50, step, 3600.0)
        clock.now += 0.001
    assert len(memory) == 50
    assert len(memory._expiries) <= 2 * 50 + 1024
