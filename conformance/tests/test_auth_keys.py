"""API keys: how they are sent, their format and environment, scopes, bad keys, maker keys.

Each test issues its own keys (``POST /_sim/keys``) for a partner record of its own and revokes
them afterwards; the simulator's demo keys are never touched. Requests leave from a loopback
address of their own so the per-IP backstop budget of 127.0.0.1 is not shared with other
tests. Firm requests restrict the auction to a random non-maker wallet: once authenticated
they answer the no-quote ``no_restricted_liquidity`` and hold nothing.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from eth_account import Account

from conformance.deployment.key_source import KeySource
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.client import Client, Response, fresh_loopback_address, is_loopback_url
from conformance.wire.inputs import KEY_FORMAT as GIVEN_KEY_FORMAT
from conformance.wire.needs import skip_message
from conformance.wire.response_checks import (
    assert_data,
    assert_error,
    assert_no_rate_limit_headers,
    assert_rate_limit_headers,
)
from conformance.wire.signing import random_nonce, sign_taker_proof

ONE_TOKEN = 10**18  # 1 USDT: above the minimum size on both chains
LIVE_CHAIN, TEST_CHAIN = 56, 97
CHAIN_OF = {"live": LIVE_CHAIN, "test": TEST_CHAIN}
TRADER_SCOPES = ("trades:write", "trades:read")
KEY_FORMAT = re.compile(r"^tx_(live|test)_([0-9a-f]{12})\.(\S+)$")
# The spec's ("API keys"): tx_live_ or tx_test_, a public prefix, a dot, the secret.
SPEC_KEY_FORMAT = re.compile(r"^tx_(live|test)_([^.\s]+)\.(\S+)$")

KeyFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    """A client from a loopback address no other test uses (when the target allows); paced
    without control, where the given keys are shared by the tests (their outstanding-RFQ cap
    and their window)."""
    client = (
        http.from_address(fresh_loopback_address()) if is_loopback_url(target.base_url) else http
    )
    return client if target.controllable else client.paced()


@pytest.fixture
def new_key(target: Target) -> Iterator[KeyFactory]:
    """Keys of this test's own partner (or a named one) through /_sim, revoked afterwards; the
    given keys on a target without control (conformance.deployment.key_source)."""
    source = KeySource(target, "keys")

    def make(
        environment: str = "test", scopes: tuple[str, ...] = TRADER_SCOPES, **extra: Any
    ) -> dict[str, Any]:
        return source.make(environment, scopes, **extra)

    yield make
    source.close()


def _bearer(key: Mapping[str, Any] | str) -> dict[str, str]:
    value = key if isinstance(key, str) else str(key["key"])
    return {"Authorization": f"Bearer {value}"}


def _x_api_key(key: Mapping[str, Any] | str) -> dict[str, str]:
    value = key if isinstance(key, str) else str(key["key"])
    return {"X-API-Key": value}


def _token(target: Target, chain_id: int, symbol: str) -> str:
    for token in target.chain(chain_id).get("tokens") or []:
        if token.get("symbol") == symbol:
            return str(token["address"])
    raise KeyError(f"no {symbol} on chain {chain_id}")


def _wallet(target: Target) -> dict[str, str]:
    """A demo wallet: funded with every token on both chains."""
    wallets = target.wallets()
    assert wallets, "the simulator has no demo wallets"
    return dict(wallets[0])


def _body(
    target: Target, chain_id: int = TEST_CHAIN, taker: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "chainId": chain_id,
        "sellToken": _token(target, chain_id, "USDT"),
        "buyToken": _token(target, chain_id, "NGNS"),
        "sellAmount": str(ONE_TOKEN),
        "taker": taker or _wallet(target)["address"],
        "restrictedLiquidityWallets": [Account.create().address],
        **extra,
    }


def _assert_no_quote(resp: Response) -> dict[str, Any]:
    """The request got through authentication: 200 and the deterministic no-quote."""
    data: dict[str, Any] = assert_data(resp)
    assert isinstance(data, dict), data
    assert data.get("status") == "no_quote", f"{resp.describe()}: {data!r}"
    assert data.get("reason") == "no_restricted_liquidity", f"{resp.describe()}: {data!r}"
    assert str(data.get("claimToken", "")).startswith("rfqc_"), data
    assert_rate_limit_headers(resp)
    return data


# -- sending a key -----------------------------------------------------------------------


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/api-keys/sent-authorization-bearer-api_key",
    "rfq/endpoints/post-v2-rfq-request",
    "rfq/auth/proof-of-control/rule-5",
)
@pytest.mark.parametrize("send", [_bearer, _x_api_key], ids=["bearer", "x-api-key"])
def test_key_is_accepted_as_bearer_or_x_api_key(
    target: Target,
    caller: Client,
    new_key: KeyFactory,
    send: Callable[[Mapping[str, Any]], dict[str, str]],
) -> None:
    key = new_key()
    # No takerProof: the key replaces the wallet signature.
    resp = caller.post("/v2/rfq/request", json=_body(target), headers=send(key))
    _assert_no_quote(resp)
    limit, _, _ = assert_rate_limit_headers(resp)
    if target.controllable:  # a key made on the spot is of the default tier
        tiers = target.sim().limits()["tiers"]
        assert limit == tiers["default"], "a default-tier key has its tier's limit"


@pytest.mark.spec(
    "rfq/auth/api-keys/sent-authorization-bearer-api_key",
    "rfq/errors/401-unauthorized",
    "rfq/limits/absent-responses-rejected-earlier",
)
@pytest.mark.parametrize("scheme", ["Basic", "Token", "bearer-without-value", "raw"])
def test_authorization_without_bearer_scheme_is_401(
    target: Target, caller: Client, new_key: KeyFactory, scheme: str
) -> None:
    key = str(new_key()["key"])
    value = {
        "Basic": f"Basic {key}",
        "Token": f"Token {key}",
        "bearer-without-value": "Bearer ",
        "raw": key,
    }[scheme]
    resp = caller.post("/v2/rfq/request", json=_body(target), headers={"Authorization": value})
    assert_error(resp, 401, "unauthorized", "invalid_api_key")
    assert_no_rate_limit_headers(resp)


# -- format and environment --------------------------------------------------------------


@pytest.mark.spec("rfq/auth/api-keys/format-env-_live_-public_prefix")
@pytest.mark.parametrize("environment", ["live", "test"])
def test_key_format(target: Target, new_key: KeyFactory, environment: str) -> None:
    """Every key of the environment the QA team gave (and every given key of no environment),
    and on a simulator one made here."""
    keys = [k.key for k in target.inputs.keys if k.environment in (environment, None)]
    if target.controllable:
        keys.append(str(new_key(environment)["key"]))
    if not keys:
        need = "key:live" if environment == "live" else "key:trades"
        pytest.skip(skip_message(need, f"--api-key KEY (any tx_{environment}_ key)"))
    for full in keys:
        match = SPEC_KEY_FORMAT.match(full)
        assert match, f"key {full.split('.', 1)[0]}… is not tx_<env>_<public_prefix>.<secret>"
        assert match.group(1) == environment


@pytest.mark.sim_only(because="deployment")  # keys are issued by the operator, not a client
@pytest.mark.spec(
    "rfq/auth/api-keys/format-env-_live_-public_prefix",
    "rfq/auth/api-keys/environment-prefix-tx_live_-mainnet",
)
@pytest.mark.parametrize("environment", ["live", "test"])
def test_key_is_shown_once(sim: SimControl, new_key: KeyFactory, environment: str) -> None:
    record = new_key(environment)
    prefix, secret = str(record["key"]).split(".", 1)
    assert prefix.startswith(f"tx_{environment}_"), f"a {environment} key is {prefix}…"
    assert record["key_id"] == prefix, "the public prefix is the key id"
    assert record["environment"] == environment
    resp = sim.client.get("/_sim/keys")
    listed = [k for k in assert_data(resp)["keys"] if k.get("key_id") == prefix]
    assert len(listed) == 1, f"{prefix} listed {len(listed)} times"
    assert "key" not in listed[0], f"the listing repeats the full key: {listed[0]!r}"
    assert secret.encode() not in resp.raw, "the secret appears in the key listing"


@pytest.mark.spec(
    "rfq/auth/api-keys/environment-prefix-tx_live_-mainnet",
    "rfq/endpoints/request-body/chainid",
    "rfq/errors/400-invalid_request",
)
@pytest.mark.parametrize(
    ("environment", "chain_id"),
    [("test", LIVE_CHAIN), ("live", TEST_CHAIN)],
    ids=["test-key-on-56", "live-key-on-97"],
)
def test_key_on_the_other_environment_chain_is_400(
    target: Target, caller: Client, new_key: KeyFactory, environment: str, chain_id: int
) -> None:
    key = new_key(environment)
    resp = caller.post("/v2/rfq/request", json=_body(target, chain_id), headers=_bearer(key))
    assert_error(resp, 400, "invalid_request", "environment_mismatch")
    assert_rate_limit_headers(resp)
    # The same key on its own environment's chain is fine.
    own = caller.post(
        "/v2/rfq/request", json=_body(target, CHAIN_OF[environment]), headers=_bearer(key)
    )
    _assert_no_quote(own)


# -- bad keys ----------------------------------------------------------------------------


def _unknown_key(new_key: KeyFactory, sim: SimControl | None) -> str:
    return f"tx_test_{secrets.token_hex(6)}.{secrets.token_urlsafe(32)}"


def _public_prefix(key: Mapping[str, Any]) -> str:
    return str(key["key"]).split(".", 1)[0]


def _wrong_secret(new_key: KeyFactory, sim: SimControl | None) -> str:
    return _public_prefix(new_key()) + "." + secrets.token_urlsafe(32)


def _prefix_only(new_key: KeyFactory, sim: SimControl | None) -> str:
    return _public_prefix(new_key())


def _malformed(new_key: KeyFactory, sim: SimControl | None) -> str:
    return "not-a-key"


def _suspended(new_key: KeyFactory, sim: SimControl | None) -> str:
    assert sim is not None
    key = new_key()
    sim.call("POST", f"keys/{key['key_id']}/suspend")
    return str(key["key"])


def _revoked(new_key: KeyFactory, sim: SimControl | None) -> str:
    assert sim is not None
    key = new_key()
    sim.call("POST", f"keys/{key['key_id']}/revoke")
    return str(key["key"])


BAD_KEYS = {
    "unknown": _unknown_key,
    "wrong-secret": _wrong_secret,
    "prefix-only": _prefix_only,
    "malformed": _malformed,
    "suspended": _suspended,  # these two need /_sim/keys to suspend or revoke a key
    "revoked": _revoked,
}
NEED_CONTROL = frozenset({"suspended", "revoked"})


@pytest.mark.spec(
    "rfq/auth/api-keys/revoked-suspended-unknown-malformed",
    "rfq/errors/401-unauthorized",
    "rfq/errors/envelope",
    "rfq/limits/absent-responses-rejected-earlier",
)
@pytest.mark.parametrize("send", [_bearer, _x_api_key], ids=["bearer", "x-api-key"])
def test_bad_keys_are_401_and_indistinguishable(
    target: Target,
    caller: Client,
    new_key: KeyFactory,
    send: Callable[[str], dict[str, str]],
) -> None:
    """Every bad key a client can make (with /_sim: suspended and revoked ones too)."""
    sim = target.sim() if target.controllable else None
    seen: dict[str, str] = {}
    for kind, make in BAD_KEYS.items():
        if sim is None and kind in NEED_CONTROL:
            continue
        headers = send(make(new_key, sim))
        for path, body in (("/v2/rfq/request", _body(target)), ("/v2/rfq/levels", None)):
            if body is None:
                resp = caller.get(path, params={"chainId": TEST_CHAIN}, headers=headers)
            else:
                resp = caller.post(path, json=body, headers=headers)
            error = assert_error(resp, 401, "unauthorized", "invalid_api_key")
            assert_no_rate_limit_headers(resp)
            answer = {k: v for k, v in error.items() if k != "request_id"}
            seen[f"{kind} {path}"] = json.dumps(answer, sort_keys=True)
    distinct = set(seen.values())
    assert len(distinct) == 1, f"bad keys are distinguishable: {seen!r}"


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec("rfq/auth/api-keys/revoked-suspended-unknown-malformed")
def test_suspended_key_works_again_once_activated(
    target: Target, sim: SimControl, caller: Client, new_key: KeyFactory
) -> None:
    key = new_key()
    sim.call("POST", f"keys/{key['key_id']}/suspend")
    resp = caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(key))
    assert_error(resp, 401, "unauthorized", "invalid_api_key")
    sim.call("POST", f"keys/{key['key_id']}/activate")
    _assert_no_quote(caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(key)))


# -- scopes ------------------------------------------------------------------------------


@pytest.mark.spec(
    "rfq/auth/api-keys/scopes",
    "rfq/errors/403-forbidden",
    "rfq/endpoints/post-v2-rfq-request",
    "rfq/endpoints/post-v2-rfq-id-cancel",
    "rfq/endpoints/post-v2-rfq-id-submit",
    "rfq/endpoints/get-v2-rfq-id",
)
def test_key_missing_the_scope_is_403(target: Target, caller: Client, new_key: KeyFactory) -> None:
    writer = new_key(scopes=("trades:write",), exact=True)
    reader = new_key(scopes=("trades:read",), exact=True)
    created = _assert_no_quote(
        caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(writer))
    )
    rfq_id = created["rfqId"]
    tx_hash = "0x" + secrets.token_hex(32)
    forbidden = [
        ("POST", "/v2/rfq/request", _body(target), reader),
        ("POST", f"/v2/rfq/{rfq_id}/cancel", None, reader),
        ("POST", f"/v2/rfq/{rfq_id}/submit", {"txHash": tx_hash}, reader),
        ("GET", f"/v2/rfq/{rfq_id}", None, writer),
    ]
    for method, path, body, key in forbidden:
        kwargs: dict[str, Any] = {"headers": _bearer(key)}
        if body is not None:
            kwargs["json"] = body
        resp = caller.request(method, path, **kwargs)
        # 403, never 404: the scope is checked before ownership, errors carry the limiter's headers.
        assert_error(resp, 403, "forbidden")
        assert_rate_limit_headers(resp)
    # The reader sees the partner's RFQ.
    record = assert_data(caller.get(f"/v2/rfq/{rfq_id}", headers=_bearer(reader)))
    assert record["rfqId"] == rfq_id


@pytest.mark.needs("key:maker", "taker_wallet")
@pytest.mark.spec(
    "rfq/auth/api-keys/maker-credentials-look-like",
    "rfq/errors/403-forbidden",
)
def test_maker_credential_on_taker_endpoints_is_403(
    target: Target, caller: Client, new_key: KeyFactory, maker_credential: str
) -> None:
    maker = maker_credential
    # The spec's shape (<env>_live_<public_prefix>.<secret>), not rfqsim's prefix length.
    assert GIVEN_KEY_FORMAT.match(maker), "maker credentials look like keys"
    trader = new_key()
    created = _assert_no_quote(
        caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(trader))
    )
    rfq_id = created["rfqId"]
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("POST", "/v2/rfq/request", _body(target)),
        ("GET", f"/v2/rfq/{rfq_id}", None),
        ("POST", f"/v2/rfq/{rfq_id}/cancel", None),
        ("POST", f"/v2/rfq/{rfq_id}/submit", {"txHash": "0x" + secrets.token_hex(32)}),
    ]
    for method, path, body in calls:
        for send in (_bearer, _x_api_key):
            kwargs: dict[str, Any] = {"headers": send(maker)}
            if body is not None:
                kwargs["json"] = body
            assert_error(caller.request(method, path, **kwargs), 403, "forbidden")


# -- the proof is ignored with a key -----------------------------------------------------


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-5",
    "rfq/endpoints/request-body/takerproof",
)
@pytest.mark.parametrize("proof_kind", ["garbage", "stale", "stranger", "replayed"])
def test_key_ignores_taker_proof(
    target: Target,
    clock: ServiceClock,
    caller: Client,
    new_key: KeyFactory,
    proof_kind: str,
) -> None:
    wallet = _wallet(target)
    taker, now = wallet["address"], clock.now_ms()
    if proof_kind == "garbage":
        proof: dict[str, Any] = {
            "nonce": "0x" + random_nonce().hex(),
            "issuedAt": now,
            "signature": "0x" + "ab" * 65,
        }
    elif proof_kind == "stale":
        proof = sign_taker_proof(
            wallet["private_key"], taker, TEST_CHAIN, issued_at_ms=now - 3_600_000
        )
    elif proof_kind == "stranger":
        proof = sign_taker_proof(Account.create().key, taker, TEST_CHAIN, issued_at_ms=now)
    else:
        # A nonce a keyless caller already spent, sent again with other contents.
        spent = sign_taker_proof(wallet["private_key"], taker, TEST_CHAIN, issued_at_ms=now)
        _assert_no_quote(caller.post("/v2/rfq/request", json=_body(target, takerProof=spent)))
        proof = {**spent, "issuedAt": now + 1}
    key = new_key()
    _assert_no_quote(
        caller.post("/v2/rfq/request", json=_body(target, takerProof=proof), headers=_bearer(key))
    )


# -- public endpoints --------------------------------------------------------------------


@pytest.mark.spec(
    "rfq/auth/api-keys/fully-public",
    "rfq/endpoints/post-v2-rfq-preview",
    "rfq/endpoints/get-v2-rfq-levels",
    "rfq/endpoints/get-v2-health",
    "rfq/endpoints/get-v2-openapi-json",
)
def test_public_endpoints_need_no_credential(target: Target, caller: Client) -> None:
    preview = _body(target)
    del preview["taker"]
    data = assert_data(caller.post("/v2/rfq/preview", json=preview))
    assert data.get("status") in ("preview", "no_quote"), data
    ladder = assert_data(caller.get("/v2/rfq/levels", params={"chainId": TEST_CHAIN}))
    assert ladder.get("chainId") == TEST_CHAIN, ladder
    assert_data(caller.get("/v2/health"))
    openapi = caller.get("/v2/openapi.json")
    assert openapi.status == 200, openapi
    assert isinstance(openapi.json().get("openapi"), str)
