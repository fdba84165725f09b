"""The maker holds' contract, run against both ledgers: in memory (one instance) and on a real
redis-server (several). The rules are services/rfq/inventory.py's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.holds import SharedHolds
from simulator.adapters.redis.server import RedisNode
from simulator.clock import Clock
from simulator.services.rfq.inventory import HoldRefusal, MakerHold, MakerInventory
from simulator.services.rfq.ports import HoldLedger
from simulator.services.shared.state import StateFormatError
from tests.integration.shared_engine.ledgers import KINDS, Ledgers, ledgers_of

Holds = Ledgers[HoldLedger]
MAKER, NGNS, USDT = "0x" + "aa" * 20, "0x" + "01" * 20, "0x" + "02" * 20


def in_memory(clock: Clock) -> HoldLedger:
    return MakerInventory(clock)


def on_engine(engine: SharedEngine, clock: Clock) -> HoldLedger:
    return SharedHolds(engine, clock)


@pytest.fixture(params=KINDS)
async def ledgers(request: pytest.FixtureRequest) -> AsyncIterator[Holds]:
    async with ledgers_of(request, in_memory, on_engine) as made:
        yield made


def hold(
    quote: str,
    amount: int,
    until: float,
    *,
    nonce: int = 0,
    rfq: str = "",
    token: str = NGNS,
    maker: str = MAKER,
    owner: str = "",
) -> MakerHold:
    return MakerHold(
        rfq_id=rfq or f"rfq-{quote}",
        quote_id=quote,
        chain_id=97,
        maker=maker,
        owner=owner,
        token=token,
        amount=amount,
        nonce=nonce or abs(hash(quote)) % 10**9,
        until=until,
        sell_token=USDT,
    )


async def test_a_maker_balance_is_held_once(ledgers: Holds) -> None:
    ledger, later = ledgers.new(), ledgers.clock.time() + 60
    assert await ledger.try_hold(hold("a", 60, later), 100, 1000) is None
    assert await ledger.try_hold(hold("b", 30, later), 100, 1000) is None
    assert await ledger.try_hold(hold("c", 20, later), 100, 1000) == HoldRefusal("underfunded", 90)
    assert await ledger.try_hold(hold("c", 10, later), 100, 95) == HoldRefusal("allowance", 90)
    assert await ledger.try_hold(hold("d", 5, later, token=USDT), 5, 5) is None  # own book
    ledger.release_quote("a")
    assert await ledger.try_hold(hold("c", 20, later), 100, 1000) is None


async def test_a_nonce_is_held_by_one_live_quote(ledgers: Holds) -> None:
    ledger, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    assert await ledger.try_hold(hold("a", 1, now + 10, nonce=7), 100, 100) is None
    refused = await ledger.try_hold(hold("b", 1, now + 10, nonce=7, token=USDT), 100, 100)
    assert refused == HoldRefusal("nonce_used", 0)  # whatever the token
    await clock.advance(11)  # a's quote lapsed at its expiresAt: the nonce is free again
    assert await ledger.try_hold(hold("b", 1, now + 30, nonce=7), 100, 100) is None
    ledger.release_rfq("rfq-b")
    assert await ledger.try_hold(hold("c", 1, now + 30, nonce=7), 100, 100) is None


async def test_holds_run_to_their_quotes_expiry_and_go_with_their_rfq(ledgers: Holds) -> None:
    ledger, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    assert await ledger.try_hold(hold("a", 50, now + 5, rfq="r1"), 100, 100) is None
    assert await ledger.try_hold(hold("b", 40, now + 5, rfq="r1"), 100, 100) is None
    assert await ledger.try_hold(hold("c", 10, now + 5, rfq="r2"), 100, 100) is None
    ledger.set_until("r1", now + 20)  # quoted: held to expiresAt
    await clock.advance(6)  # r2's hold lapsed, r1's did not
    assert await ledger.try_hold(hold("d", 11, now + 30), 100, 100) == HoldRefusal(
        "underfunded", 90
    )
    assert {h.quote_id for h in ledger.holds_for(97, USDT, NGNS)} >= {"a", "b"}
    released = ledger.release_rfq("r1")
    assert sorted(h.quote_id for h in released) == ["a", "b"]
    assert ledger.release_rfq("r1") == []
    assert await ledger.try_hold(hold("d", 100, now + 30), 100, 100) is None


async def test_a_quote_held_again_replaces_its_first_hold(ledgers: Holds) -> None:
    ledger, later = ledgers.new(), ledgers.clock.time() + 60
    assert await ledger.try_hold(hold("a", 50, later, nonce=1), 100, 100) is None
    # checked against what is committed with the first still held, then replaces it
    assert await ledger.try_hold(hold("a", 50, later, nonce=2), 100, 100) is None
    assert await ledger.try_hold(hold("b", 50, later, nonce=3), 100, 100) is None
    assert await ledger.try_hold(hold("a", 1, later, nonce=2), 100, 100) == HoldRefusal(
        "nonce_used", 0
    )


async def test_token_amounts_are_exact_however_large(ledgers: Holds) -> None:
    ledger, later = ledgers.new(), ledgers.clock.time() + 60
    whole = 10**18
    balance = 10**12 * whole + 1
    assert await ledger.try_hold(hold("a", 10**12 * whole - 1, later), balance, balance) is None
    assert await ledger.try_hold(hold("b", 3, later), balance, balance) == HoldRefusal(
        "underfunded", 10**12 * whole - 1
    )
    assert await ledger.try_hold(hold("b", 2, later), balance, balance) is None


async def test_the_state_round_trips_and_a_foreign_one_changes_nothing(ledgers: Holds) -> None:
    ledger, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    assert (
        await ledger.try_hold(hold("a", 10**20, now + 9.5, nonce=4, rfq="r"), 10**21, 10**21)
        is None
    )
    assert await ledger.try_hold(hold("b", 3, now + 12, token=USDT, rfq="r"), 10, 10) is None
    state = ledger.state("rfq.inventory")
    saved = state.dump()
    assert saved["holds"]["a"]["amount"] == 10**20
    assert saved["holds"]["a"]["until"] == now + 9.5
    ledger.release_rfq("r")
    state.load(saved)
    assert state.dump() == saved
    with pytest.raises(StateFormatError):
        state.load({**saved, "holds": {"x": {"amount": "many"}}})
    assert state.dump() == saved
    # what was put back counts: a's nonce and a's amount are held again
    refused = await ledger.try_hold(hold("c", 1, now + 30, nonce=4), 10**21, 10**21)
    assert refused == HoldRefusal("nonce_used", 0)
    assert await ledger.try_hold(hold("c", 10**21, now + 30), 10**21, 10**21) == HoldRefusal(
        "underfunded", 10**20
    )
    assert sorted(h.quote_id for h in ledger.release_rfq("r")) == ["a", "b"]


async def test_two_instances_never_both_spend_one_maker_balance_or_nonce(
    redis_node: RedisNode,
) -> None:
    ledgers: Holds = Ledgers(redis_node, in_memory, on_engine)
    one, two = ledgers.new(), ledgers.new()
    later = ledgers.clock.time() + 60
    answers = await asyncio.gather(
        *((one if i % 2 else two).try_hold(hold(f"q{i}", 30, later), 100, 100) for i in range(10))
    )
    assert answers.count(None) == 3
    assert set(answers) - {None} == {HoldRefusal("underfunded", 90)}
    nonce = hold("n0", 1, later, nonce=99, token=USDT)
    answers = await asyncio.gather(
        *(
            (one if i % 2 else two).try_hold(replace(nonce, quote_id=f"n{i}"), 100, 100)
            for i in range(6)
        )
    )
    assert answers.count(None) == 1
    assert set(answers) - {None} == {HoldRefusal("nonce_used", 0)}
    for engine in ledgers.engines:
        await engine.aclose()


async def test_the_earliest_end_of_another_caller_s_hold_in_one_direction(
    ledgers: Holds,
) -> None:
    """Each instance reads every instance's live holds (the no-quote's reservedUntil): of the
    makers named, in that direction, not the caller's own, the earliest end; the lapsed ones
    and those of the other direction, chain or token do not count."""
    ledger, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    other = "0x" + "bb" * 20
    assert await ledger.try_hold(hold("a", 1, now + 10, owner="key:me"), 100, 100) is None
    assert await ledger.try_hold(hold("b", 1, now + 20), 100, 100) is None
    assert await ledger.try_hold(hold("c", 1, now + 30, maker=other), 100, 100) is None
    assert await ledger.try_hold(hold("d", 1, now + 5, token=USDT), 100, 100) is None
    reader = ledgers.new() if ledgers.engines else ledger  # another instance, if shared
    both = {MAKER, other}
    assert await reader.earliest_end(97, USDT, NGNS, both, None) == now + 10
    assert await reader.earliest_end(97, USDT, NGNS, both, "key:me") == now + 20
    assert await reader.earliest_end(97, USDT, NGNS, {other}, None) == now + 30
    assert await reader.earliest_end(97, USDT, NGNS, set(), None) is None
    assert await reader.earliest_end(97, NGNS, USDT, both, None) is None  # the other direction
    assert await reader.earliest_end(56, USDT, NGNS, both, None) is None  # another chain
    await clock.advance(21)
    assert await reader.earliest_end(97, USDT, NGNS, both, "key:me") == now + 30


async def test_the_earliest_end_passes_the_caller_s_many_holds_and_follows_changes(
    ledgers: Holds,
) -> None:
    """However many of the caller's own holds end first, another caller's is found; an
    owner whose first hold lapsed still counts with its next; an extension, a release and a
    restored state move the answer as they move the holds."""
    ledger, clock = ledgers.new(), ledgers.clock
    now = clock.time()
    for n in range(40):  # the caller's own, all ending before anyone else's
        mine = hold(f"m{n}", 1, now + 1 + n / 10, rfq=f"mine-{n}", owner="key:me")
        assert await ledger.try_hold(mine, 100, 100) is None
    assert await ledger.try_hold(hold("x1", 1, now + 2, owner="key:x"), 100, 100) is None
    assert await ledger.try_hold(hold("x2", 1, now + 50, owner="key:x"), 100, 100) is None
    assert await ledger.try_hold(hold("y", 1, now + 40, owner="key:y"), 100, 100) is None
    reader = ledgers.new() if ledgers.engines else ledger  # another instance, if shared
    assert await reader.earliest_end(97, USDT, NGNS, {MAKER}, "key:me") == now + 2
    await clock.advance(3)  # x's first lapsed (not pruned): its next one, after y's
    assert await reader.earliest_end(97, USDT, NGNS, {MAKER}, "key:me") == now + 40
    # Each write goes behind (the writer's queue): read at another instance once it landed.
    ledger.set_until("rfq-y", now + 60)  # y's quote extended past x's next
    await ledgers.drained()
    assert await reader.earliest_end(97, USDT, NGNS, {MAKER}, "key:me") == now + 50
    ledger.release_rfq("rfq-x2")
    await ledgers.drained()
    assert await reader.earliest_end(97, USDT, NGNS, {MAKER}, "key:me") == now + 60
    state = ledger.state("rfq.inventory")
    saved = state.dump()
    ledger.release_rfq("rfq-y")
    await ledgers.drained()
    assert await reader.earliest_end(97, USDT, NGNS, {MAKER}, "key:me") is None
    state.load(saved)  # y's hold is back, and indexed again
    assert await reader.earliest_end(97, USDT, NGNS, {MAKER}, "key:me") == now + 60
    first_mine = await reader.earliest_end(97, USDT, NGNS, {MAKER}, "key:y")
    assert first_mine == pytest.approx(now + 3.1)  # the caller's own that had not lapsed


async def test_a_direction_is_reserved_since_its_oldest_live_hold(ledgers: Holds) -> None:
    """The rates feed's reserved side: since when any instance's live holds there exist."""
    ledger, clock = ledgers.new(), ledgers.clock
    first = clock.time()
    assert await ledger.try_hold(hold("a", 1, first + 10), 100, 100) is None
    await clock.advance(5)
    assert await ledger.try_hold(hold("b", 1, first + 30, maker="0x" + "bb" * 20), 100, 100) is None
    reader = ledgers.new() if ledgers.engines else ledger  # another instance, if shared
    # taken when held, a moment after `first` (to a tenth of a millisecond on the engine)
    assert await reader.reserved_since(97, USDT, NGNS) == pytest.approx(first, abs=0.1)
    assert await reader.reserved_since(97, NGNS, USDT) is None  # the other direction
    await clock.advance(6)  # a lapsed
    assert await reader.reserved_since(97, USDT, NGNS) == pytest.approx(first + 5, abs=0.1)
