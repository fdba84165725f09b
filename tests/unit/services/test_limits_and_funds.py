from __future__ import annotations

import asyncio

import pytest

from simulator.clock import Clock
from simulator.errors import InvalidRequest, RateLimited, UpstreamError
from simulator.services.access.limits import FixedWindowLimiter
from simulator.services.rfq.funds import TakerFunds
from simulator.services.rfq.ports import ChainUnreadable
from simulator.services.rfq.slots import OutstandingSlots


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


async def test_slots_cap_release_and_expiry() -> None:
    clock = Clock()
    slots = OutstandingSlots(clock)
    for i in range(4):
        slots.take("ip:a", f"r{i}", 4, clock.time() + 100 + i)
    with pytest.raises(RateLimited) as over:
        slots.take("ip:a", "r4", 4, clock.time() + 100)
    assert "Retry-After" not in over.value.headers
    assert over.value.details is not None
    assert over.value.details["reason"] == "outstanding_rfq_cap"
    slots.take("ip:b", "other", 4, clock.time() + 100)  # another caller has its own slots
    slots.release("r0")
    slots.take("ip:a", "r5", 4, clock.time() + 100)
    await clock.advance(102)  # r1 lapsed (held until +101)
    slots.take("ip:a", "r6", 4, clock.time() + 100)


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
    assert funds.committed(97, "0xt", "0xa") == 80
    await clock.advance(14)
    assert funds.committed(97, "0xT", "0xA") == 80  # inside the skew
    await clock.advance(2)
    assert funds.committed(97, "0xT", "0xA") == 0
    funds.release("r1")
