"""Proof-of-control rules with a fake on-chain checker (the chain path is covered end to end by
the conformance suite)."""

from __future__ import annotations

import asyncio
import os

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
