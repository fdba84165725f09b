"""Proof-of-control rules with a fake on-chain checker (the chain path is covered end to end by
the conformance suite)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from eth_account import Account

from simulator.clock import Clock
from simulator.errors import (
    ProofOfControlInvalid,
    ProofOfControlReplayed,
    ProofOfControlRequired,
    ProofOfControlStale,
    TakerControlUnverifiable,
)
from simulator.services.access.proofs import (
    ProofService,
    ProofSettings,
    TakerProof,
    taker_control_message,
)
from simulator.services.rfq.ports import ChainUnreadable

KEY = Account.create()
OTHER = Account.create()


class FakeChecker:
    def __init__(self, answer: bool = False, down: bool = False) -> None:
        self.answer = answer
        self.down = down
        self.calls = 0

    async def is_valid_signature(
        self, chain_id: int, signer: str, digest: bytes, signature: bytes
    ) -> bool:
        self.calls += 1
        await asyncio.sleep(0)
        if self.down:
            raise ChainUnreadable("down")
        return self.answer


def proof(
    clock: Clock, account: object = KEY, taker: str = KEY.address, offset_ms: int = 0
) -> TakerProof:
    nonce = os.urandom(32)
    issued = clock.millis() + offset_ms
    message = taker_control_message(taker, 97, nonce, issued)
    signature = Account.sign_message(message, account.key).signature  # type: ignore[attr-defined]
    return TakerProof(nonce, issued, bytes(signature))


def service(checker: FakeChecker | None = None) -> tuple[ProofService, Clock, FakeChecker]:
    clock = Clock()
    fake = checker or FakeChecker()
    return ProofService(clock, fake, ProofSettings()), clock, fake


async def test_eoa_proof_needs_no_chain_read_and_earns_a_grant() -> None:
    proofs, clock, checker = service()
    await proofs.authorize(taker=KEY.address, chain_id=97, proof=proof(clock), caller="ip:a")
    assert checker.calls == 0
    await proofs.authorize(taker=KEY.address, chain_id=97, proof=None, caller="ip:a")
    with pytest.raises(ProofOfControlRequired):
        await proofs.authorize(taker=KEY.address, chain_id=97, proof=None, caller="ip:b")
    with pytest.raises(ProofOfControlRequired):
        await proofs.authorize(taker=KEY.address, chain_id=56, proof=None, caller="ip:a")
    await clock.advance(12 * 3600 + 1)
    with pytest.raises(ProofOfControlRequired):
        await proofs.authorize(taker=KEY.address, chain_id=97, proof=None, caller="ip:a")


@pytest.mark.parametrize("offset_ms", [-61_000, 61_000])
async def test_stale_either_side(offset_ms: int) -> None:
    proofs, clock, _ = service()
    with pytest.raises(ProofOfControlStale):
        await proofs.verify(
            taker=KEY.address, chain_id=97, proof=proof(clock, offset_ms=offset_ms), caller="x"
        )


async def test_edge_of_window_is_fresh() -> None:
    proofs, clock, _ = service()
    await proofs.verify(
        taker=KEY.address, chain_id=97, proof=proof(clock, offset_ms=-59_000), caller="x"
    )


async def test_replay_rules() -> None:
    proofs, clock, _ = service()
    first = proof(clock)
    await proofs.verify(taker=KEY.address, chain_id=97, proof=first, caller="ip:a")
    await proofs.verify(taker=KEY.address, chain_id=97, proof=first, caller="ip:a")  # same caller
    with pytest.raises(ProofOfControlReplayed):
        await proofs.verify(taker=KEY.address, chain_id=97, proof=first, caller="ip:b")
    changed = TakerProof(first.nonce, first.issued_at_ms + 1, first.signature)
    with pytest.raises(ProofOfControlReplayed):
        await proofs.verify(taker=KEY.address, chain_id=97, proof=changed, caller="ip:a")


async def test_parallel_identical_proofs_from_two_callers_bind_once() -> None:
    proofs, clock, _ = service(FakeChecker(answer=True))
    shared = proof(clock, account=OTHER, taker=KEY.address)  # not the taker's key: chain path
    results = await asyncio.gather(
        proofs.verify(taker=KEY.address, chain_id=97, proof=shared, caller="ip:a"),
        proofs.verify(taker=KEY.address, chain_id=97, proof=shared, caller="ip:b"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, ProofOfControlReplayed) for r in results) == 1
    assert sum(r is None for r in results) == 1


async def test_wrong_signer_is_invalid_after_the_chain_says_no() -> None:
    proofs, clock, checker = service(FakeChecker(answer=False))
    with pytest.raises(ProofOfControlInvalid):
        await proofs.verify(
            taker=KEY.address, chain_id=97, proof=proof(clock, account=OTHER), caller="x"
        )
    assert checker.calls == 1


async def test_unreadable_chain_is_502_and_the_same_proof_works_later() -> None:
    checker = FakeChecker(answer=True, down=True)
    proofs, clock, _ = service(checker)
    contract_proof = proof(clock, account=OTHER, taker=KEY.address)
    with pytest.raises(TakerControlUnverifiable):
        await proofs.verify(taker=KEY.address, chain_id=97, proof=contract_proof, caller="x")
    checker.down = False
    await proofs.verify(taker=KEY.address, chain_id=97, proof=contract_proof, caller="x")


async def test_junk_signature_does_not_squat_the_nonce() -> None:
    proofs, clock, _ = service(FakeChecker(answer=False))
    good = proof(clock)
    junk = TakerProof(good.nonce, good.issued_at_ms, b"\x01" * 65)
    with pytest.raises(ProofOfControlInvalid):
        await proofs.verify(taker=KEY.address, chain_id=97, proof=junk, caller="attacker")
    await proofs.verify(taker=KEY.address, chain_id=97, proof=good, caller="owner")


# --- the clock moved by /_sim/clock/advance (docs/decisions.md TT4) ---------------------------

MOVED_S = 240  # what rfqsim trigger's three flows used to add up to


def wall_proof(offset_ms: int = 0) -> TakerProof:
    """Signed as an integrator's client signs: issuedAt from its own (the wall) clock."""
    nonce = os.urandom(32)
    issued = int(time.time() * 1000) + offset_ms
    signature = Account.sign_message(taker_control_message(KEY.address, 97, nonce, issued), KEY.key)
    return TakerProof(nonce, issued, bytes(signature.signature))


async def test_a_wall_clock_proof_is_fresh_while_the_clock_is_moved() -> None:
    proofs, clock, _ = service()
    await clock.advance(MOVED_S)
    await proofs.authorize(taker=KEY.address, chain_id=97, proof=wall_proof(), caller="ip:a")
    assert await proofs.has_grant(KEY.address, 97, "ip:a")
    # A proof issued against the service clock (GET /_sim/clock) stays fresh as well.
    await proofs.verify(taker=KEY.address, chain_id=97, proof=proof(clock), caller="ip:a")


@pytest.mark.parametrize("offset_ms", [-61_000, 61_000])
async def test_stale_by_both_clocks_is_stale_and_names_both(offset_ms: int) -> None:
    proofs, clock, _ = service()
    await clock.advance(MOVED_S)
    late = wall_proof(offset_ms)
    with pytest.raises(ProofOfControlStale) as raised:
        await proofs.verify(taker=KEY.address, chain_id=97, proof=late, caller="x")
    details = raised.value.details
    assert details is not None
    assert details["issuedAt"] == late.issued_at_ms
    assert details["windowMs"] == 60_000
    assert abs(details["serverTime"] - clock.millis()) < 5_000
    assert abs(details["wallTime"] - time.time() * 1000) < 5_000
    assert details["serverTime"] - details["wallTime"] >= MOVED_S * 1000 - 5_000


async def test_switched_off_the_wall_clock_is_not_consulted() -> None:
    clock = Clock()
    proofs = ProofService(clock, FakeChecker(), ProofSettings(wall_clock_when_moved=False))
    await clock.advance(MOVED_S)
    with pytest.raises(ProofOfControlStale) as raised:
        await proofs.verify(taker=KEY.address, chain_id=97, proof=wall_proof(), caller="x")
    assert raised.value.details is not None
    assert "wallTime" not in raised.value.details  # the service clock alone judged it
    await proofs.verify(taker=KEY.address, chain_id=97, proof=proof(clock), caller="x")


async def test_a_stale_proof_stays_stale_when_the_clock_moves_after_it() -> None:
    # Issued against the service clock, then the clock moves past its window: the advance
    # makes it stale, whatever the wall clock says (it is not one the wall clock issued now).
    proofs, clock, _ = service()
    await clock.advance(MOVED_S)
    issued = proof(clock)
    await clock.advance(61)
    with pytest.raises(ProofOfControlStale):
        await proofs.verify(taker=KEY.address, chain_id=97, proof=issued, caller="x")


async def test_a_wall_clock_proofs_nonce_stays_bound_while_it_is_fresh() -> None:
    proofs, clock, _ = service()
    await clock.advance(MOVED_S)
    first = wall_proof()
    await proofs.verify(taker=KEY.address, chain_id=97, proof=first, caller="ip:a")
    # Another advance puts the service clock far past the proof; it is still fresh by the wall
    # clock, so another caller may not take it over, and the sweep keeps its binding.
    await clock.advance(3600)
    proofs.evict_stale()
    with pytest.raises(ProofOfControlReplayed):
        await proofs.verify(taker=KEY.address, chain_id=97, proof=first, caller="ip:b")
    await proofs.verify(taker=KEY.address, chain_id=97, proof=first, caller="ip:a")


async def test_the_deviation_keeps_a_proof_from_before_an_advance_fresh_by_the_wall_clock() -> None:
    # Why the conformance suite starts its simulator with the deviation off: moving the clock
    # no longer makes a proof signed just before stale while the wall clock finds it fresh.
    proofs, clock, _ = service()
    issued = proof(clock)  # offset 0: the service clock is the wall clock
    await clock.advance(61)
    await proofs.verify(taker=KEY.address, chain_id=97, proof=issued, caller="x")
