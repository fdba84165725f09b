from __future__ import annotations

import asyncio

import pytest

from simulator.clock import Clock
from simulator.errors import InvalidRequest, UpstreamError
from simulator.services.access.limits import FixedWindowLimiter
from simulator.services.rfq.funds import TakerFunds
from simulator.services.rfq.ports import ChainUnreadable
from simulator.services.shared.events import Event, EventLog


async def test_fixed_window_counts_and_resets_with_the_clock() -> None:
    clock = Clock()
    limiter = FixedWindowLimiter(clock)
    decisions = [limiter.hit("k", 3) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert decisions[-1].reset_s == 60
    await clock.advance(30)
    assert limiter.hit("k", 3).reset_s == 30
    await clock.advance(30)
    assert limiter.hit("k", 3).allowed


class Balances:
    def __init__(self, balance: int, down: bool = False) -> None:
        self.balance = balance
        self.down = down

    async def token_balance(self, chain_id: int, token: str, owner: str) -> int:
        await asyncio.sleep(0.01)  # a real read yields; parallel requests interleave here
        if self.down:
            raise ChainUnreadable("down")
        return self.balance


async def test_parallel_reservations_cannot_spend_one_balance_twice() -> None:
    clock = Clock()
    funds = TakerFunds(clock, Balances(100))
    results = await asyncio.gather(
        *(
            funds.reserve_checked(f"r{i}", 97, "0xT", "0xA", 60, clock.time() + 60)
            for i in range(3)
        ),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 1
    refused = [r for r in results if isinstance(r, InvalidRequest)]
    assert len(refused) == 2
    assert refused[0].details == {
        "reason": "insufficient_funds",
        "required": "60",
        "available": "100",
        "committed": "60",
    }


async def test_unreadable_balance_is_502_never_insufficient() -> None:
    funds = TakerFunds(Clock(), Balances(0, down=True))
    with pytest.raises(UpstreamError):
        await funds.reserve_checked("r", 97, "0xT", "0xA", 1, 0)


async def test_reservation_lasts_to_deadline_plus_skew_unless_released() -> None:
    clock = Clock()
    funds = TakerFunds(clock, Balances(100))
    await funds.reserve_checked("r1", 97, "0xT", "0xA", 100, clock.time() + 1)
    funds.hold("r1", 80, clock.time() + 10)
    assert await funds.committed(97, "0xt", "0xa") == 80
    await clock.advance(14)
    assert await funds.committed(97, "0xT", "0xA") == 80  # inside the skew
    await clock.advance(2)
    assert await funds.committed(97, "0xT", "0xA") == 0
    funds.release("r1")


async def test_ended_limiter_windows_are_forgotten() -> None:
    clock = Clock()
    limiter = FixedWindowLimiter(clock)
    for i in range(100):
        limiter.hit(f"backstop:10.0.0.{i}", 600)
    await clock.advance(30)
    limiter.hit("backstop:10.0.0.200", 600)
    await clock.advance(31)
    limiter.evict_stale()
    assert list(limiter._windows) == ["backstop:10.0.0.200"]
    assert limiter.hit("backstop:10.0.0.1", 1).allowed  # a returning caller starts afresh


def test_the_event_log_keeps_the_latest_events_only() -> None:
    log = EventLog(keep=100)
    seen: list[Event] = []

    class Sink:
        def publish(self, event: Event) -> None:
            seen.append(event)

    log.subscribers.append(Sink())
    for i in range(1000):
        log.publish(Event(f"e{i}", "rfq.filled", float(i), None, {}))
    assert len(seen) == 1000  # every event reaches the subscribers
    assert 100 <= len(log.events) <= 110
    assert log.events[-1].id == "e999"
