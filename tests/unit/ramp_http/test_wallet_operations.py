"""What every wallet-naming ramp operation (customers, details, kyc, kyc/status, kyc/link)
checks over real loopback HTTP: a proof missing, stale or signed by another key, wallet or chain
is 401 with its reason and reaches no provider (docs/ramp.md RA37), a proof is reused by its
wallet and replayed by no other, an unknown provider is 404, the schema comes before the proof
(RA5), and sandbox calls need a sandbox chain."""

from __future__ import annotations

import pytest
from eth_account import Account

from tests.unit.ramp_http.edge import WALLET_OPERATIONS, Edge, error, invalid, ok, operation_body
from tests.unit.services.ramp_harness import proof_json, sign_proof


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_proofs_missing_stale_or_by_another_key_are_401(edge: Edge, path: str) -> None:
    await edge.register()
    registrations = edge.fake.calls["create_customer"]
    body = operation_body(edge, path)
    del body["proof"]
    envelope = await error(await edge.post(path, body), 401, "unauthorized")
    assert envelope["details"]["reason"] == "proof_of_control_required"
    for offset_s in (-61, 61):
        issued = edge.clock.millis() + offset_s * 1000
        stale = operation_body(edge, path, proof=edge.proof(issued_at_ms=issued))
        envelope = await error(await edge.post(path, stale), 401, "unauthorized")
        assert envelope["details"]["reason"] == "proof_of_control_stale"
    other = Account.create()
    for proof in (
        sign_proof(edge.clock, other, taker=edge.wallet),  # another key signed for the wallet
        sign_proof(edge.clock, other),  # another wallet's own proof
        sign_proof(edge.clock, edge.account, chain_id=56),  # signed for another chain
    ):
        forged = operation_body(edge, path, proof=proof_json(proof))
        envelope = await error(await edge.post(path, forged), 401, "unauthorized")
        assert envelope["details"]["reason"] == "proof_of_control_invalid"
    assert edge.fake.calls["create_customer"] == registrations
    assert edge.fake.calls["submit_kyc"] + edge.fake.calls["kyc_link"] == 0


async def test_a_proof_is_reused_by_its_wallet_and_replayed_by_no_other(edge: Edge) -> None:
    await edge.register()
    proof = edge.proof()
    for path in ("customers/details", "customers/kyc/status", "customers/kyc/link"):
        await ok(await edge.post(path, edge.body(proof=proof)))  # RA37: same IP, within 60 s
    other = Account.create()
    resp = await edge.post("customers/details", edge.body(wallet=other.address, proof=proof))
    envelope = await error(resp, 401, "unauthorized")
    assert envelope["details"]["reason"] == "proof_of_control_replayed"


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_an_unknown_provider_is_404(edge: Edge, path: str) -> None:
    await edge.register()
    resp = await edge.post(path, operation_body(edge, path, provider="otherramp"))
    await error(resp, 404, "not_found")


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_schema_comes_before_the_proof(edge: Edge, path: str) -> None:
    body = operation_body(edge, path, chainId=0)
    del body["proof"]
    assert await invalid(await edge.post(path, body)) == ["chainId"]  # RA5: 400 before 401


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_sandbox_calls_need_a_sandbox_chain(edge: Edge, path: str) -> None:
    await edge.register()
    resp = await edge.post(path, operation_body(edge, path, sandbox=True, chainId=56))
    envelope = await error(resp, 401, "unauthorized")  # the proof is bound to chain 97
    assert envelope["details"]["reason"] == "proof_of_control_invalid"
    body = operation_body(edge, path, sandbox=True, chainId=56, proof=edge.proof(chain_id=56))
    envelope = await error(await edge.post(path, body), 403, "forbidden")
    assert envelope["details"]["reason"] == "sandbox_not_available"
    await ok(await edge.post(path, operation_body(edge, path, sandbox=True)))  # chain 97
