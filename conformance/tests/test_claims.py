"""Claim tokens and ownership of an RFQ: status, cancel and submit.

An RFQ is created either keyless (with a takerProof, from a loopback address of its own) or
with a key of a partner record issued for the test. Requests restrict the auction to a random
non-maker wallet, so every RFQ here is a deterministic, terminal ``no_quote``
(``no_restricted_liquidity``): it holds no slot, and cancel or submit on it is a conflict.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from eth_account import Account

from conformance.checks.resource_checks import assert_record_fields, assert_record_secrets
from conformance.deployment.key_source import KeySource
from conformance.deployment.service_clock import Clocked, ServiceClock
from conformance.deployment.target import Target
from conformance.wire.client import Client, Response, fresh_loopback_address, is_loopback_url
from conformance.wire.response_checks import (
    assert_data,
    assert_error,
    assert_issues,
    assert_rate_limit_headers,
    parse_iso_utc,
)
from conformance.wire.signing import sign_taker_proof

CHAIN = 97
ONE_TOKEN = 10**18
UNKNOWN_RFQ = "rfq_000000000000000000000000"

KeyFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def new_caller(target: Target, http: Client) -> Callable[[], Client]:
    """Makes clients, each from a loopback address no other test uses (when possible); without
    control they pace themselves, as the given key is shared with the other tests."""

    def make() -> Client:
        own = (
            http
            if not is_loopback_url(target.base_url)
            else http.from_address(fresh_loopback_address())
        )
        return own if target.controllable else own.paced()

    return make


@pytest.fixture
def new_key(target: Target) -> Iterator[KeyFactory]:
    """Test-environment trades keys of the test's own partner through /_sim (revoked after),
    another key of a key's partner or a key of another partner when asked
    (``same_partner_as=``, ``other_partner_than=``); the given keys without control
    (conformance.deployment.key_source)."""
    source = KeySource(target, "claims")

    def make(**wanted: Any) -> Any:
        return source.make("test", ("trades:write", "trades:read"), **wanted)

    yield make
    source.close()


def _bearer(key: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


def _claim(token: str) -> dict[str, str]:
    return {"X-Rfq-Claim": token}


def _token(target: Target, symbol: str) -> str:
    for token in target.chain(CHAIN).get("tokens") or []:
        if token.get("symbol") == symbol:
            return str(token["address"])
    raise KeyError(f"no {symbol} on chain {CHAIN}")


def _wallet(target: Target) -> dict[str, str]:
    wallets = target.wallets()
    assert wallets, "the simulator has no demo wallets"
    return dict(wallets[0])


def _body(target: Target, proof: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": CHAIN,
        "sellToken": _token(target, "USDT"),
        "buyToken": _token(target, "NGNS"),
        "sellAmount": str(ONE_TOKEN),
        "taker": _wallet(target)["address"],
        "restrictedLiquidityWallets": [Account.create().address],
    }
    if proof is not None:
        body["takerProof"] = proof
    return body


def _created(resp: Response) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(resp)
    assert isinstance(data, dict), data
    assert data.get("status") == "no_quote", f"{resp.describe()}: {data!r}"
    assert data.get("reason") == "no_restricted_liquidity", data
    assert str(data.get("rfqId", "")).startswith("rfq_"), data
    assert str(data.get("claimToken", "")).startswith("rfqc_"), data
    return data


def _keyless_rfq(target: Target, clock: Clocked, caller: Client) -> dict[str, Any]:
    wallet = _wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=clock.now_ms()
    )
    return _created(caller.post("/v2/rfq/request", json=_body(target, proof)))


def _not_found(resp: Response) -> None:
    assert_error(resp, 404, "not_found")
    assert_rate_limit_headers(resp)


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/claim-token/returned-once-post-v2",
    "rfq/auth/claim-token/without-key-only-authorization",
    "rfq/endpoints/get-v2-rfq-id",
    "rfq/endpoints/cancel-submit-status/status",
    "rfq/resources/rfq-record/rfqid",
    "rfq/resources/rfq-record/status",
    "rfq/resources/rfq-record/chainid",
    "rfq/resources/rfq-record/selltoken-buytoken",
    "rfq/resources/rfq-record/taker",
    "rfq/resources/rfq-record/noquotereason",
    "rfq/resources/rfq-record/createdat",
    "rfq/resources/rfq-record/signed-order-signature-claim",
)
def test_claim_token_alone_authorizes_status(
    target: Target, clock: ServiceClock, new_caller: Callable[[], Client]
) -> None:
    creator, elsewhere = new_caller(), new_caller()
    created = _keyless_rfq(target, clock, creator)
    token = created["claimToken"]
    # The token is the authorization, not the client IP: any caller holding it may read.
    for client in (creator, elsewhere):
        resp = client.get(f"/v2/rfq/{created['rfqId']}", headers=_claim(token))
        record = assert_data(resp)
        assert_rate_limit_headers(resp)
        assert_record_fields(record)
        assert_record_secrets(record)
        assert token not in resp.raw.decode(), "GET returned the claim token"
        assert record["rfqId"] == created["rfqId"]
        assert record["status"] == "no_quote"
        assert record["noQuoteReason"] == "no_restricted_liquidity"
        assert record["chainId"] == CHAIN
        assert record["taker"].lower() == _wallet(target)["address"].lower()
        assert record["sellToken"].lower() == _token(target, "USDT").lower()
        assert record["buyToken"].lower() == _token(target, "NGNS").lower()
        assert record["sellAmount"] == str(ONE_TOKEN)
        parse_iso_utc(record["createdAt"])


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/claim-token/without-key-only-authorization",
    "rfq/auth/claim-token/rfqid-never-sufficient",
    "rfq/endpoints/cancel-submit-status/ownership",
    "rfq/states/rule-1",
    "rfq/errors/404-not_found",
)
def test_wrong_or_missing_claim_token_is_404(
    target: Target, clock: ServiceClock, new_caller: Callable[[], Client]
) -> None:
    caller = new_caller()
    mine = _keyless_rfq(target, clock, caller)
    other = _keyless_rfq(target, clock, caller)
    rfq_id = mine["rfqId"]
    tx_hash = "0x" + secrets.token_hex(32)
    wrong_tokens: list[dict[str, str]] = [
        {},  # rfqId alone, even from the caller that created it
        _claim(other["claimToken"]),  # a real token of another RFQ
        _claim("rfqc_" + secrets.token_urlsafe(32)),
        _claim(""),
    ]
    for headers in wrong_tokens:
        _not_found(caller.get(f"/v2/rfq/{rfq_id}", headers=headers))
        _not_found(caller.post(f"/v2/rfq/{rfq_id}/cancel", headers=headers))
        _not_found(
            caller.post(f"/v2/rfq/{rfq_id}/submit", json={"txHash": tx_hash}, headers=headers)
        )
    # A real token names only its own RFQ.
    _not_found(caller.get(f"/v2/rfq/{UNKNOWN_RFQ}", headers=_claim(mine["claimToken"])))
    # The right one works.
    assert assert_data(caller.get(f"/v2/rfq/{rfq_id}", headers=_claim(mine["claimToken"])))


@pytest.mark.spec(
    "rfq/endpoints/cancel-submit-status/ownership",
    "rfq/auth/api-keys/key-gives-own-rate-limit",
    "rfq/errors/404-not_found",
    "rfq/states/rule-1",
)
def test_ownership_is_partner_scoped_with_keys(
    target: Target, new_key: KeyFactory, new_caller: Callable[[], Client]
) -> None:
    caller = new_caller()
    creator = new_key()
    colleague = new_key(same_partner_as=creator)
    outsider = new_key(other_partner_than=creator)
    created = _created(caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(creator)))
    rfq_id, token = created["rfqId"], created["claimToken"]
    path = f"/v2/rfq/{rfq_id}"
    # Any key of the creating partner owns it, without the claim token.
    for key in (creator, colleague):
        assert assert_data(caller.get(path, headers=_bearer(key)))["rfqId"] == rfq_id
    # Another partner's key does not: 404 (never 403) on status, cancel and submit.
    tx_hash = "0x" + secrets.token_hex(32)
    _not_found(caller.get(path, headers=_bearer(outsider)))
    _not_found(caller.post(f"{path}/cancel", headers=_bearer(outsider)))
    _not_found(caller.post(f"{path}/submit", json={"txHash": tx_hash}, headers=_bearer(outsider)))
    # ... unless it also presents the claim token: either proof of ownership works.
    resp = caller.get(path, headers={**_bearer(outsider), **_claim(token)})
    assert assert_data(resp)["rfqId"] == rfq_id
    # Keyless, the creator's client IP proves nothing.
    _not_found(caller.get(path))


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/errors/409-conflict",
    "rfq/endpoints/cancel-submit-status/cancel-releases-rfqs-claim",
    "rfq/endpoints/post-v2-rfq-id-cancel",
    "rfq/endpoints/post-v2-rfq-id-submit",
)
@pytest.mark.parametrize("owner", ["claim-token", "key"])
def test_cancel_and_submit_on_a_no_quote_are_409(
    target: Target,
    clock: ServiceClock,
    new_key: KeyFactory,
    new_caller: Callable[[], Client],
    owner: str,
) -> None:
    caller = new_caller()
    if owner == "key":
        key = new_key()
        created = _created(caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(key)))
        headers = _bearer(key)
    else:
        created = _keyless_rfq(target, clock, caller)
        headers = _claim(created["claimToken"])
    path = f"/v2/rfq/{created['rfqId']}"
    for resp in (
        caller.post(f"{path}/cancel", headers=headers),
        caller.post(
            f"{path}/submit", json={"txHash": "0x" + secrets.token_hex(32)}, headers=headers
        ),
    ):
        assert_error(resp, 409, "conflict")
        assert_rate_limit_headers(resp)
    # Nothing changed.
    record = assert_data(caller.get(path, headers=headers))
    assert record["status"] == "no_quote"
    assert record["txHash"] is None
    assert record["submittedAt"] is None


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/endpoints/cancel-submit-status/submit-body",
    "rfq/errors/400-invalid_request",
    "rfq/errors/details-optional-either-issues",
)
@pytest.mark.parametrize(
    "tx_hash",
    ["0x1234", "ab" * 32, "0x" + "zz" * 32, "0x" + "ab" * 33, None],
    ids=["short", "no-0x", "not-hex", "long", "null"],
)
def test_submit_with_a_malformed_tx_hash_is_400(
    target: Target, clock: ServiceClock, new_caller: Callable[[], Client], tx_hash: str | None
) -> None:
    caller = new_caller()
    created = _keyless_rfq(target, clock, caller)
    resp = caller.post(
        f"/v2/rfq/{created['rfqId']}/submit",
        json={"txHash": tx_hash},
        headers=_claim(created["claimToken"]),
    )
    error = assert_error(resp, 400, "invalid_request")
    assert_issues(error, "txHash")
