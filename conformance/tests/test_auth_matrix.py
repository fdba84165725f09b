"""Who may call what (spec 1-rfq-v2 "Endpoints": "Auth column: who may call.") and what identifies
a caller ("Authentication": "Three things can identify a caller: a wallet proof (keyless), a
claim token (ownership of one RFQ), an API key.").

The endpoint table's auth column is walked row by row, each row with the credential it names
(allowed) and without it (refused with the spec's status). RFQs are requested with a
restricted list naming a wallet that is no maker, so every request is a deterministic no-quote
that holds nothing; cancel and submit of a no-quote answer 409, which shows the caller got past
authorization (an unauthorized caller gets 404, or 403 for a key without the scope).

Keys come from ``/_sim/keys`` (one partner per test) on a simulator, else from the QA team's
keys (conformance.deployment.key_source): exact-scope keys, two keys of one partner and a key of
another, told apart by their ``partner`` labels; a key missing skips the test, naming it. Requests
leave from a loopback address no other test uses (paced without control: the given keys are shared).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from eth_account import Account

from conformance.calls.webhooks import NOWHERE
from conformance.deployment.key_source import KeySource
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.target import Target
from conformance.wire.client import Client, Response, fresh_loopback_address, is_loopback_url
from conformance.wire.response_checks import assert_data, assert_error
from conformance.wire.signing import sign_taker_proof

CHAIN = 97
ONE_TOKEN = 10**18  # 1 USDT (18 decimals)
WEBHOOK_URL = f"{NOWHERE}/auth-matrix"

KeyFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def new_caller(target: Target, http: Client) -> Callable[[], Client]:
    if not is_loopback_url(target.base_url):
        pytest.skip("these checks choose client IPs: they need a target on 127.0.0.0/8")

    def make() -> Client:
        client = http.from_address(fresh_loopback_address())
        return client if target.controllable else client.paced()

    return make


@pytest.fixture
def new_key(target: Target) -> Iterator[KeyFactory]:
    """``new_key(*scopes, exact=..., same_partner_as=..., other_partner_than=...)``: a test key
    of this test's own partner through /_sim, else a given one
    (conformance.deployment.key_source)."""
    source = KeySource(target, "auth-matrix")

    def make(*scopes: str, **wanted: Any) -> dict[str, Any]:
        return source.make("test", scopes, **wanted)

    yield make
    source.close()


def _bearer(key: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


def _token(target: Target, symbol: str) -> str:
    for token in target.chain(CHAIN).get("tokens") or []:
        if token.get("symbol") == symbol:
            return str(token["address"])
    raise KeyError(f"no {symbol} on chain {CHAIN}")


def _demo_wallet(target: Target) -> dict[str, str]:
    wallets = target.wallets()
    assert wallets, "the simulator lists no demo wallets"
    return dict(wallets[0])


def _body(target: Target, taker: str, **extra: Any) -> dict[str, Any]:
    return {
        "chainId": CHAIN,
        "sellToken": _token(target, "USDT"),
        "buyToken": _token(target, "NGNS"),
        "sellAmount": str(ONE_TOKEN),
        "taker": taker,
        # No maker funds this wallet: a deterministic no-quote that holds nothing.
        "restrictedLiquidityWallets": [Account.create().address],
        **extra,
    }


def _no_quote(resp: Response) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(resp)
    assert data["status"] == "no_quote", data
    assert data["reason"] == "no_restricted_liquidity", data
    return data


def _claim(token: str) -> dict[str, str]:
    return {"X-Rfq-Claim": token}


def _passed_authorization(resp: Response) -> None:
    # A no-quote cannot be cancelled or submitted: 409 comes after the ownership check.
    assert_error(resp, 409, "conflict")


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/endpoints/auth-column-may-call",
    "rfq/endpoints/post-v2-rfq-preview",
    "rfq/endpoints/post-v2-rfq-request",
    "rfq/endpoints/post-v2-rfq-id-cancel",
    "rfq/endpoints/post-v2-rfq-id-submit",
    "rfq/endpoints/get-v2-rfq-id",
    "rfq/endpoints/get-v2-rfq-levels",
    "rfq/endpoints/get-v2-health",
    "rfq/endpoints/get-v2-openapi-json",
    "rfq/endpoints/post-v1-webhooks",
    "rfq/endpoints/get-v1-webhooks",
    "rfq/endpoints/delete-v1-webhooks-id",
    "rfq/auth/api-keys/scopes",
    "rfq/errors/401-unauthorized",
    "rfq/errors/403-forbidden",
    "rfq/errors/404-not_found",
)
def test_auth_column_of_every_endpoint(
    target: Target, clock: ServiceClock, new_caller: Callable[[], Client], new_key: KeyFactory
) -> None:
    anyone = new_caller()
    writer = new_key("trades:write", exact=True)
    reader = new_key("trades:read", exact=True, same_partner_as=writer)
    manager = new_key("webhooks:manage")
    wallet = _demo_wallet(target)
    tx_hash = "0x" + secrets.token_hex(32)

    # GET /v2/health, GET /v2/openapi.json, GET /v2/rfq/levels, POST /v2/rfq/preview: none.
    assert_data(anyone.get("/v2/health"))
    assert anyone.get("/v2/openapi.json").status == 200
    assert assert_data(anyone.get("/v2/rfq/levels", params={"chainId": CHAIN}))["chainId"] == CHAIN
    preview = {k: v for k, v in _body(target, wallet["address"]).items() if k != "taker"}
    assert assert_data(anyone.post("/v2/rfq/preview", json=preview))["status"] == "no_quote"

    # POST /v2/rfq/request: none (wallet proof) or a key with trades:write.
    body = _body(target, wallet["address"])
    assert_error(
        anyone.post("/v2/rfq/request", json=body), 401, "unauthorized", "proof_of_control_required"
    )
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=clock.now_ms()
    )
    keyless = _no_quote(anyone.post("/v2/rfq/request", json={**body, "takerProof": proof}))
    keyed = _no_quote(anyone.post("/v2/rfq/request", json=body, headers=_bearer(writer)))
    assert_error(
        anyone.post("/v2/rfq/request", json=body, headers=_bearer(reader)), 403, "forbidden"
    )

    # cancel and submit: the X-Rfq-Claim header, or a key with trades:write.
    for rfq in (keyless, keyed):
        rfq_id, token = rfq["rfqId"], rfq["claimToken"]
        cancel, submit = f"/v2/rfq/{rfq_id}/cancel", f"/v2/rfq/{rfq_id}/submit"
        _passed_authorization(anyone.post(cancel, headers=_claim(token)))
        _passed_authorization(anyone.post(submit, json={"txHash": tx_hash}, headers=_claim(token)))
        assert_error(anyone.post(cancel), 404, "not_found")
        assert_error(anyone.post(submit, json={"txHash": tx_hash}), 404, "not_found")
    cancel, submit = f"/v2/rfq/{keyed['rfqId']}/cancel", f"/v2/rfq/{keyed['rfqId']}/submit"
    _passed_authorization(anyone.post(cancel, headers=_bearer(writer)))
    _passed_authorization(anyone.post(submit, json={"txHash": tx_hash}, headers=_bearer(writer)))
    assert_error(anyone.post(cancel, headers=_bearer(reader)), 403, "forbidden")
    assert_error(
        anyone.post(submit, json={"txHash": tx_hash}, headers=_bearer(reader)), 403, "forbidden"
    )

    # GET /v2/rfq/{id}: the X-Rfq-Claim header, or a key with trades:read.
    for rfq in (keyless, keyed):
        path = f"/v2/rfq/{rfq['rfqId']}"
        record = assert_data(anyone.get(path, headers=_claim(rfq["claimToken"])))
        assert record["rfqId"] == rfq["rfqId"], record
        assert_error(anyone.get(path), 404, "not_found")
    path = f"/v2/rfq/{keyed['rfqId']}"
    assert assert_data(anyone.get(path, headers=_bearer(reader)))["rfqId"] == keyed["rfqId"]
    assert_error(anyone.get(path, headers=_bearer(writer)), 403, "forbidden")

    # /v1/webhooks: a key with webhooks:manage, for each of POST, GET and DELETE.
    hook = {"url": WEBHOOK_URL, "eventTypes": ["rfq.filled"]}
    assert_error(anyone.post("/v1/webhooks", json=hook), 401, "unauthorized")
    assert_error(anyone.post("/v1/webhooks", json=hook, headers=_bearer(writer)), 403, "forbidden")
    created = assert_data(anyone.post("/v1/webhooks", json=hook, headers=_bearer(manager)), 201)
    assert_error(anyone.get("/v1/webhooks"), 401, "unauthorized")
    assert_error(anyone.get("/v1/webhooks", headers=_bearer(reader)), 403, "forbidden")
    listed = [e["id"] for e in assert_data(anyone.get("/v1/webhooks", headers=_bearer(manager)))]
    if target.controllable:
        assert listed == [created["id"]], listed
    else:  # a given key's partner may have endpoints of its own (and of other tests)
        assert created["id"] in listed, listed
    endpoint = f"/v1/webhooks/{created['id']}"
    assert_error(anyone.delete(endpoint), 401, "unauthorized")
    assert_error(anyone.delete(endpoint, headers=_bearer(writer)), 403, "forbidden")
    assert assert_data(anyone.delete(endpoint, headers=_bearer(manager)))["deleted"] is True
    assert_error(anyone.delete(endpoint, headers=_bearer(manager)), 404, "not_found")


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/three-things-can-identify",
    "rfq/auth/claim-token/rfqid-never-sufficient",
    "rfq/endpoints/cancel-submit-status/ownership",
    "rfq/auth/proof-of-control/rule-4",
)
def test_three_things_identify_a_caller_and_nothing_else(
    target: Target, clock: ServiceClock, new_caller: Callable[[], Client], new_key: KeyFactory
) -> None:
    wallet = _demo_wallet(target)
    prover, stranger = new_caller(), new_caller()
    body = _body(target, wallet["address"])
    creator = new_key("trades:write", "trades:read")
    colleague = new_key("trades:read", same_partner_as=creator)
    outsider = new_key("trades:read", other_partner_than=creator)

    # 1. A wallet proof identifies a keyless caller (and earns it a grant as that caller).
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=clock.now_ms()
    )
    keyless = _no_quote(prover.post("/v2/rfq/request", json={**body, "takerProof": proof}))
    _no_quote(prover.post("/v2/rfq/request", json=body))  # the grant: same caller, no proof
    assert_error(
        stranger.post("/v2/rfq/request", json=body),
        401,
        "unauthorized",
        "proof_of_control_required",
    )

    # 2. A claim token identifies the owner of one RFQ, from any address.
    path = f"/v2/rfq/{keyless['rfqId']}"
    record = assert_data(stranger.get(path, headers=_claim(keyless["claimToken"])))
    assert record["rfqId"] == keyless["rfqId"], record
    # ... and nothing else does: not the rfqId, not the address (or wallet) that proved and
    # requested it, not a key, not another RFQ's claim token.
    assert_error(prover.get(path), 404, "not_found")
    assert_error(prover.get(path, headers=_bearer(creator)), 404, "not_found")
    other = _no_quote(prover.post("/v2/rfq/request", json=body))
    assert_error(prover.get(path, headers=_claim(other["claimToken"])), 404, "not_found")

    # 3. An API key identifies its partner: any key of the partner owns the partner's RFQs.
    keyed = _no_quote(stranger.post("/v2/rfq/request", json=body, headers=_bearer(creator)))
    keyed_path = f"/v2/rfq/{keyed['rfqId']}"
    for key in (creator, colleague):
        assert assert_data(prover.get(keyed_path, headers=_bearer(key)))["rfqId"] == keyed["rfqId"]
    assert_error(stranger.get(keyed_path, headers=_bearer(outsider)), 404, "not_found")
    assert_error(stranger.get(keyed_path), 404, "not_found")  # the address that requested it
