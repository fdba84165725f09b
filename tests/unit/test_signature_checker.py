"""The on-chain signature check for a chain the service does not run: a definite "not valid"
(the proof is 401 proof_of_control_invalid), never "chain unreadable" (502, retry)."""

from __future__ import annotations

import pytest
from eth_account import Account

from simulator.adapters.access.signatures import ChainSignatureChecker
from simulator.clock import Clock
from simulator.errors import ProofOfControlInvalid
from simulator.services.access.proofs import (
    ProofService,
    ProofSettings,
    TakerProof,
    taker_control_message,
)


async def test_an_unknown_chain_answers_not_valid() -> None:
    checker = ChainSignatureChecker({})
    signer = Account.create().address
    assert await checker.is_valid_signature(1, signer, b"\x00" * 32, b"\x01" * 65) is False


async def test_a_wrong_key_proof_on_a_chain_we_do_not_run_is_invalid_not_unverifiable() -> None:
    clock = Clock()
    proofs = ProofService(clock, ChainSignatureChecker({}), ProofSettings())
    wallet, intruder = Account.create(), Account.create()
    nonce, issued_at = b"\x07" * 32, clock.millis()
    signed = intruder.sign_message(taker_control_message(wallet.address, 1, nonce, issued_at))
    proof = TakerProof(nonce=nonce, issued_at_ms=issued_at, signature=bytes(signed.signature))
    with pytest.raises(ProofOfControlInvalid):
        await proofs.verify(taker=wallet.address, chain_id=1, proof=proof, caller="ip:127.0.0.1")
