"""The proof-of-control ledger's contract, run against both ledgers: in memory (one instance)
and on a real redis-server (several). The rules are services/access/proofs.py's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.proofs import SharedProofs
from simulator.adapters.redis.server import RedisNode
from simulator.clock import Clock
from simulator.errors import ProofOfControlReplayed
from simulator.services.access.proofs import (
    FreshWindow,
    MemoryProofs,
    NonceUse,
    ProofLedger,
    ProofService,
    ProofSettings,
)
from simulator.services.shared.state import StateFormatError
from tests.integration.shared_engine.ledgers import KINDS, Ledgers, ledgers_of
from tests.unit.services.test_proofs import KEY, FakeChecker, proof

Proofs = Ledgers[ProofLedger]
NONCE = bytes(range(32))


def in_memory(clock: Clock) -> ProofLedger:
    return MemoryProofs()


def on_engine(engine: SharedEngine, clock: Clock) -> ProofLedger:
    return SharedProofs(engine)


@pytest.fixture(params=KINDS)
async def ledgers(request: pytest.FixtureRequest) -> AsyncIterator[Proofs]:
    async with ledgers_of(request, in_memory, on_engine) as made:
        yield made


def use(issued_s: float, caller: str = "ip:a", signature: bytes = b"\x01" * 65) -> NonceUse:
    return NonceUse(("0x" + "ab" * 20, 97, int(issued_s * 1000), signature), caller)


def around(*moments: float) -> FreshWindow:
    return FreshWindow(tuple((at - 60, at + 60) for at in moments))


async def test_a_fresh_binding_holds_and_a_stale_one_gives_way(ledgers: Proofs) -> None:
    ledger, now = ledgers.new(), 1_800_000_000.0
    first = use(now)
    assert await ledger.bound(NONCE) is None
    assert await ledger.bind(NONCE, first, around(now)) is None
    assert await ledger.bound(NONCE) == first
    assert await ledger.bind(NONCE, use(now, "ip:b"), around(now + 30)) == first  # still fresh
    assert await ledger.bound(NONCE) == first
    later = use(now + 61)
    assert await ledger.bind(NONCE, later, around(now + 61)) is None  # first went stale
    assert await ledger.bound(NONCE) == later
    # fresh by either of two windows (the wall clock's, while the service clock is moved)
    assert await ledger.bind(NONCE, first, around(now + 5_000, now + 61)) == later


async def test_grants_and_the_sweep(ledgers: Proofs) -> None:
    ledger, now = ledgers.new(), 1_800_000_000.0
    key, other = ("0x" + "ab" * 20, 97, "ip:a"), ("0x" + "ab" * 20, 56, "ip:a")
    ledger.grant(key, now + 100)
    ledger.grant(other, now + 10)
    assert await ledger.grant_until(key) == now + 100
    assert await ledger.bind(NONCE, use(now), around(now)) is None
    kept = bytes(32)
    assert await ledger.bind(kept, use(now + 50), around(now + 50)) is None
    ledger.evict(around(now + 70), now + 20)  # NONCE's proof is stale, `other` ended
    await ledgers.drained()
    assert (await ledger.grant_until(key), await ledger.grant_until(other)) == (now + 100, None)
    assert await ledger.bound(NONCE) is None
    assert await ledger.bound(kept) == use(now + 50)


async def test_the_state_round_trips_and_a_foreign_one_changes_nothing(ledgers: Proofs) -> None:
    ledger, now = ledgers.new(), 1_800_000_000.0
    assert await ledger.bind(NONCE, use(now, signature=bytes(70)), around(now)) is None
    ledger.grant(("0x" + "ab" * 20, 97, "key:k1"), now + 43_200)
    state = ledger.state("access.proofs")
    saved = state.dump()
    assert saved["grants"] == [[["0x" + "ab" * 20, 97, "key:k1"], now + 43_200]]
    assert saved["nonces"] == {
        NONCE.hex(): {
            "contents": ["0x" + "ab" * 20, 97, int(now * 1000), "00" * 70],
            "caller": "ip:a",
        }
    }
    state.load({"nonces": {}, "grants": []})
    assert await ledger.bound(NONCE) is None
    state.load(saved)
    assert state.dump() == saved
    with pytest.raises(StateFormatError):
        state.load({"nonces": {"zz": 1}, "grants": []})
    assert state.dump() == saved
    assert await ledger.bound(NONCE) == use(now, signature=bytes(70))


async def test_two_instances_bind_a_nonce_once(redis_node: RedisNode) -> None:
    ledgers: Proofs = Ledgers(redis_node, in_memory, on_engine)
    one, two = ledgers.new(), ledgers.new()
    now = 1_800_000_000.0
    answers = await asyncio.gather(
        *((one if i % 2 else two).bind(NONCE, use(now, f"ip:{i}"), around(now)) for i in range(8))
    )
    assert answers.count(None) == 1
    (winner,) = [f"ip:{i}" for i, answer in enumerate(answers) if answer is None]
    assert {answer.caller for answer in answers if answer is not None} == {winner}
    for engine in ledgers.engines:
        await engine.aclose()


async def test_a_proof_used_at_one_instance_is_a_replay_at_the_other(
    redis_node: RedisNode,
) -> None:
    ledgers: Proofs = Ledgers(redis_node, in_memory, on_engine)
    clock = ledgers.clock
    one = ProofService(clock, FakeChecker(), ProofSettings(), ledgers.new())
    two = ProofService(clock, FakeChecker(), ProofSettings(), ledgers.new())
    sent = proof(clock)
    await one.authorize(taker=KEY.address, chain_id=97, proof=sent, caller="ip:a")
    await two.authorize(taker=KEY.address, chain_id=97, proof=sent, caller="ip:a")  # identical
    with pytest.raises(ProofOfControlReplayed):
        await two.authorize(taker=KEY.address, chain_id=97, proof=sent, caller="ip:b")
    await one.ledger.drained()  # type: ignore[attr-defined]
    assert await two.has_grant(KEY.address, 97, "ip:a")  # the grant earned at the first
    for engine in ledgers.engines:
        await engine.aclose()
