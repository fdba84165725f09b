"""The taker reservations' contract, run against both ledgers: in memory (one instance) and on
a real redis-server (several), through the proof-of-funds rules of services/rfq/funds.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.funds import SharedReservations
from simulator.adapters.redis.server import RedisNode
from simulator.clock import Clock
from simulator.errors import InvalidRequest
from simulator.services.rfq.funds import RESERVATION_SKEW_S, MemoryReservations, TakerFunds
from simulator.services.rfq.ports import ReservationLedger
from simulator.services.shared.state import StateFormatError
from tests.integration.shared_engine.ledgers import KINDS, Ledgers, ledgers_of
from tests.unit.services.test_limits_and_funds import Balances

Reservations = Ledgers[ReservationLedger]
WHOLE = 10**18  # one token of 18 decimals: past what a double or a 64-bit integer holds exactly


def in_memory(clock: Clock) -> ReservationLedger:
    return MemoryReservations(clock)


def on_engine(engine: SharedEngine, clock: Clock) -> ReservationLedger:
    return SharedReservations(engine, clock)


@pytest.fixture(params=KINDS)
async def ledgers(request: pytest.FixtureRequest) -> AsyncIterator[Reservations]:
    async with ledgers_of(request, in_memory, on_engine) as made:
        yield made


def refusal(answer: BaseException | None) -> dict[str, object]:
    assert isinstance(answer, InvalidRequest), answer
    assert answer.details is not None
    assert answer.details["reason"] == "insufficient_funds"
    return answer.details


async def test_parallel_reservations_cannot_spend_one_balance_twice(
    ledgers: Reservations,
) -> None:
    funds = TakerFunds(ledgers.clock, Balances(100), ledgers.new())
    until = ledgers.clock.time() + 60
    results = await asyncio.gather(
        *(funds.reserve_checked(f"r{i}", 97, "0xT", "0xA", 60, until) for i in range(3)),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 1
    refused = [refusal(r) for r in results if r is not None]
    assert (
        refused
        == [
            {
                "reason": "insufficient_funds",
                "required": "60",
                "available": "100",
                "committed": "60",
            }
        ]
        * 2
    )


async def test_a_reservation_lasts_to_its_deadline_plus_the_skew_unless_released(
    ledgers: Reservations,
) -> None:
    clock = ledgers.clock
    funds = TakerFunds(clock, Balances(100), ledgers.new())
    await funds.reserve_checked("r1", 97, "0xT", "0xA", 100, clock.time() + 1)
    funds.hold("r1", 80, clock.time() + 10)  # the quote's exact amount, to its deadline
    assert await funds.committed(97, "0xt", "0xa") == 80
    await funds.reserve_checked("r2", 97, "0xT", "0xA", 20, clock.time() + 30)
    await clock.advance(10 + RESERVATION_SKEW_S - 1)
    assert await funds.committed(97, "0xT", "0xA") == 100  # inside the skew
    await clock.advance(2)
    assert await funds.committed(97, "0xT", "0xA") == 20
    funds.release("r2")
    assert await funds.committed(97, "0xT", "0xA") == 0
    funds.hold("r1", 50, clock.time() + 100)  # lapsed: stays gone
    assert await funds.committed(97, "0xT", "0xA") == 0


async def test_token_amounts_are_exact_however_large(ledgers: Reservations) -> None:
    clock = ledgers.clock
    balance = 10**12 * WHOLE + 1
    funds = TakerFunds(clock, Balances(balance), ledgers.new())
    until = clock.time() + 60
    half = 5 * 10**11 * WHOLE
    await funds.reserve_checked("a", 56, "0xT", "0xA", half, until)
    await funds.reserve_checked("b", 56, "0xT", "0xA", half, until)
    with pytest.raises(InvalidRequest) as over:
        await funds.reserve_checked("c", 56, "0xT", "0xA", 2, until)
    assert refusal(over.value)["committed"] == str(2 * half)
    funds.hold("b", half - 1, until)  # 1 unit less: now exactly room for 2
    await funds.reserve_checked("c", 56, "0xT", "0xA", 2, until)
    assert await funds.committed(56, "0xT", "0xA") == balance
    funds.release("a")
    assert await funds.committed(56, "0xT", "0xA") == half + 1
    assert await funds.committed(56, "0xT", "0xB") == 0  # another token has its own


async def test_a_reservation_made_again_replaces_the_first(ledgers: Reservations) -> None:
    funds = TakerFunds(ledgers.clock, Balances(100), ledgers.new())
    until = ledgers.clock.time() + 60
    await funds.reserve_checked("r", 97, "0xT", "0xA", 70, until)
    await funds.reserve_checked("r", 97, "0xT", "0xA", 90, until)  # its own 70 do not count
    assert await funds.committed(97, "0xT", "0xA") == 90
    await funds.reserve_checked("r", 97, "0xT", "0xB", 30, until)  # moved to another token
    assert (await funds.committed(97, "0xT", "0xA"), await funds.committed(97, "0xT", "0xB")) == (
        0,
        30,
    )


async def test_lapsed_reservations_of_wallets_that_never_return_are_dropped(
    ledgers: Reservations,
) -> None:
    clock = ledgers.clock
    ledger = ledgers.new()
    funds = TakerFunds(clock, Balances(10), ledger)
    for i in range(3):
        await funds.reserve_checked(f"r{i}", 97, f"0x{i}", "0xa", 1, clock.time() + 5)
    await funds.reserve_checked("kept", 97, "0x9", "0xa", 1, clock.time() + 500)
    await clock.advance(6)
    funds.evict_lapsed()
    await ledgers.drained()
    saved = ledger.state("rfq.funds").dump()
    assert list(saved["reservations"]) == ["kept"]
    assert saved["totals"] == [[[97, "0x9", "0xa"], 1]]


async def test_the_state_round_trips_and_a_foreign_one_changes_nothing(
    ledgers: Reservations,
) -> None:
    clock = ledgers.clock
    ledger = ledgers.new()
    funds = TakerFunds(clock, Balances(3 * WHOLE), ledger)
    now = clock.time()
    await funds.reserve_checked("r0", 56, "0xT", "0xA", 2 * WHOLE + 7, now + 30)
    await funds.reserve_checked("r1", 97, "0xT", "0xA", 5, now + 40.5)
    state = ledger.state("rfq.funds")
    saved = state.dump()
    assert saved["reservations"]["r0"] == {
        "chain_id": 56,
        "taker": "0xt",
        "token": "0xa",
        "amount": 2 * WHOLE + 7,
        "held_until": now + 30,
    }
    funds.release("r0")
    funds.release("r1")
    state.load(saved)
    assert state.dump() == saved
    with pytest.raises(StateFormatError):
        state.load({"reservations": {"x": {"chain_id": "no"}}, "totals": [], "ends": []})
    assert state.dump() == saved
    assert await funds.committed(56, "0xT", "0xA") == 2 * WHOLE + 7  # what was put back counts


async def test_two_instances_never_both_spend_the_last_of_a_balance(
    redis_node: RedisNode,
) -> None:
    ledgers = Ledgers(redis_node, in_memory, on_engine)
    one = TakerFunds(ledgers.clock, Balances(100), ledgers.new())
    two = TakerFunds(ledgers.clock, Balances(100), ledgers.new())
    until = ledgers.clock.time() + 60
    results = await asyncio.gather(
        *(
            (one if i % 2 else two).reserve_checked(f"r{i}", 97, "0xT", "0xA", 30, until)
            for i in range(10)
        ),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 3
    assert {refusal(r)["committed"] for r in results if r is not None} == {"90"}
    for engine in ledgers.engines:
        await engine.aclose()
