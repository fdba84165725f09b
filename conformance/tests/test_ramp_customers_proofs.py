"""The proof of control on every wallet-naming ramp call (customers, details, kyc,
kyc/status): missing, stale, signed by another wallet or for another chain is 401 with its
reason and stores nothing, a replayed nonce with new contents is refused, and one signature
serves details, KYC, status and the link for 60 seconds and no longer. Every test uses fresh
wallets; the one that advances the clock is ``sim_only``.
"""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from conformance.calls.ramp import PERSON, SMALL_IMAGE, Ramp, document, fresh_wallet
from conformance.tests.ramp_answers import customer_of, kyc_of, ok
from conformance.wire.response_checks import assert_error


@pytest.mark.spec(
    "ramp/auth/item-2",
    "ramp/errors/401-unauthorized",
    "ramp/resources/proof-object/nonce-issuedat-signature-takercontrol",
    "ramp/limits/proof-validity",
    "ramp/endpoints/post-v2-ramp-customers/no-read-without-proof",
    "ramp/auth/item-1",
)
def test_proof_rules_on_every_wallet_call(ramp: Ramp) -> None:
    wallet, other = fresh_wallet(), fresh_wallet()
    bad_proofs = {
        "proof_of_control_required": None,
        "proof_of_control_stale": ramp.proof(wallet, issued_at_ms=ramp.stale_issued_at_ms()),
        "proof_of_control_invalid": ramp.proof(wallet, signer=other),
    }
    wrong_chain = ramp.proof(wallet, chain_id=56)
    for path in ("customers", "customers/details", "customers/kyc", "customers/kyc/status"):
        extra: dict[str, Any] = {"acceptedTerms": True} if path == "customers" else {}
        if path == "customers/kyc":
            extra = {"document": document(), "selfieImage": SMALL_IMAGE}
        for reason, proof in bad_proofs.items():
            body = ramp.wallet_body(wallet, **extra)
            body["proof"] = proof
            assert_error(ramp.post(path, body), 401, "unauthorized", reason)
        body = ramp.wallet_body(wallet, wrong_chain, **extra)
        assert_error(ramp.post(path, body), 401, "unauthorized", "proof_of_control_invalid")
    assert ok(ramp.details(wallet))["details"] is None, "nothing was registered"


@pytest.mark.spec("ramp/auth/item-2", "ramp/errors/401-unauthorized")
def test_replayed_nonce_is_refused(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    nonce = secrets.token_bytes(32)
    now = ramp.now_ms()
    first = ramp.proof(wallet, nonce=nonce, issued_at_ms=now)
    ok(ramp.post("customers/details", ramp.wallet_body(wallet, first)))
    replayed = ramp.proof(wallet, nonce=nonce, issued_at_ms=now - 1000)  # same nonce, new contents
    resp = ramp.post("customers/details", ramp.wallet_body(wallet, replayed))
    assert_error(resp, 401, "unauthorized", "proof_of_control_replayed")


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/resources/proof-object/one-signature-valid-60",
    "ramp/limits/proof-validity",
)
def test_one_signature_serves_details_kyc_and_status_for_60_seconds(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    ramp.lead_wall_clock(61)  # stale after the move below by any clock the service reads
    proof = ramp.proof(wallet)
    customer_of(
        ramp.post("customers", ramp.wallet_body(wallet, proof, acceptedTerms=True, **PERSON))
    )
    ok(ramp.post("customers/details", ramp.wallet_body(wallet, proof)))
    kyc = ramp.wallet_body(wallet, proof, document=document(), selfieImage=SMALL_IMAGE)
    assert kyc_of(ramp.post("customers/kyc", kyc))["state"] == "pending"
    kyc_of(ramp.post("customers/kyc/status", ramp.wallet_body(wallet, proof)))
    ok(ramp.post("customers/kyc/link", ramp.wallet_body(wallet, proof)))
    ramp.advance(61)
    resp = ramp.post("customers/details", ramp.wallet_body(wallet, proof))
    assert_error(resp, 401, "unauthorized", "proof_of_control_stale")
