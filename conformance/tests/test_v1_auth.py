"""v1 keys, scopes and environments (spec 3 "Authentication", "Errors" 400/401/403), as an
existing v1 integrator meets them: its own keys with exactly the scopes under test, both key
headers, bad and inactive keys, the scope table row by row for the v1 operations served, and
chains its key's environment cannot use.

Keys come from ``/_sim/keys`` (one partner per test, revoked afterwards); requests leave from a
loopback address of the test's own. Without control the keys are the QA team's (a row needing a
key with exactly some scopes skips, naming them), suspending, revoking and rotating need
``/_sim``, and the details.reason codes are rfqsim's (checked on rfqsim only).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.calls.v1_calls import (
    KEY_SHAPE,
    V1Keys,
    api_key_header,
    bearer,
    chains_without_contracts,
    own_address_client,
    v1_keys,
    webhook_body,
)
from conformance.deployment.sim_control import (
    SimControl,
)
from conformance.deployment.target import Target
from conformance.wire.client import (
    Client,
    Response,
)
from conformance.wire.needs import skip_message
from conformance.wire.response_checks import (
    assert_data,
    assert_error,
)

# Keys come from /_sim/keys on a simulator, else from the QA team
# (conformance.calls.v1_calls.V1Keys).

TEST_CHAIN = 97  # "Chain 97 runs a live test corridor"
LIVE_CHAIN = 56
ERRORS = ("v1/errors/same-envelope-document-1",)


@pytest.fixture
def keys(target: Target) -> Iterator[V1Keys]:
    with v1_keys(target) as issued:
        yield issued


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    """A client IP of the test's own; paced when the keys are the shared given ones."""
    client = own_address_client(target, http)
    return client if target.controllable else client.paced()


def _corridors(caller: Client, headers: dict[str, str], **params: Any) -> Response:
    return caller.get("/v1/corridors", headers=headers, params=params or None)


def _without_request_id(error: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in error.items() if k != "request_id"}


def _bad_keys(good: dict[str, Any]) -> list[dict[str, str]]:
    """Headers with keys that authenticate nobody: a known prefix with a wrong secret (in both
    headers), an unknown key and a malformed one."""
    prefix, _, secret = str(good["key"]).partition(".")
    flipped = f"{prefix}.{secret[:-1]}{'A' if secret[-1] != 'A' else 'B'}"
    return [
        {"Authorization": f"Bearer {flipped}"},
        {"X-API-Key": flipped},
        {"Authorization": "Bearer tx_test_0123456789ab." + "A" * 43},
        {"X-API-Key": "tx_test_nonsense"},
    ]


def _all_alike_401(caller: Client, presented: list[dict[str, str]]) -> None:
    errors = [assert_error(_corridors(caller, h), 401, "unauthorized") for h in presented]
    first = _without_request_id(errors[0])
    for error in errors[1:]:
        assert _without_request_id(error) == first, (first, error)


@pytest.mark.spec("v1/auth/item-1", "v1/errors/401-unauthorized", *ERRORS)
def test_keyed_v1_paths_need_a_key_in_either_header(caller: Client, keys: V1Keys) -> None:
    assert_error(_corridors(caller, {}), 401, "unauthorized")
    assert_error(caller.get("/v1/webhooks"), 401, "unauthorized")
    assert_error(caller.post("/v1/webhooks", json=webhook_body()), 401, "unauthorized")
    assert_error(caller.delete("/v1/webhooks/whe_unknown"), 401, "unauthorized")
    reader = keys.key("quotes:read")
    assert isinstance(assert_data(_corridors(caller, bearer(reader))), list)
    assert isinstance(assert_data(_corridors(caller, api_key_header(reader))), list)
    manager = keys.key("webhooks:manage")
    hooks = assert_data(caller.get("/v1/webhooks", headers=api_key_header(manager)))
    assert hooks == [] if keys.sim else isinstance(hooks, list), hooks  # a fresh partner: none


@pytest.mark.spec("v1/auth/item-4", "v1/errors/401-unauthorized", *ERRORS)
@pytest.mark.needs("key:v1")
def test_a_wrong_secret_an_unknown_and_a_malformed_key_are_401_indistinguishably(
    caller: Client, keys: V1Keys
) -> None:
    good = keys.key("quotes:read")
    _all_alike_401(caller, _bad_keys(good))
    assert_data(_corridors(caller, bearer(good)))  # the good key was never affected


@pytest.mark.spec("v1/auth/item-4", "v1/errors/401-unauthorized", *ERRORS)
@pytest.mark.needs("sim_control")
def test_revoked_suspended_and_bad_keys_are_401_indistinguishably(
    caller: Client, keys: V1Keys, sim: SimControl
) -> None:
    good = keys.key("quotes:read")
    suspended, revoked = keys.key("quotes:read"), keys.key("quotes:read")
    sim.call("POST", f"keys/{suspended['key_id']}/suspend")
    keys.revoke(revoked)
    inactive = [bearer(suspended), bearer(revoked), api_key_header(revoked)]
    _all_alike_401(caller, inactive + _bad_keys(good))
    # A suspended key comes back when re-activated; the good key was never affected.
    sim.call("POST", f"keys/{suspended['key_id']}/activate")
    assert_data(_corridors(caller, bearer(suspended)))
    assert_data(_corridors(caller, bearer(good)))


@pytest.mark.spec("v1/auth/item-2", "v1/errors/401-unauthorized")
@pytest.mark.sim_only(because="deployment")  # keys are issued and revoked by the operator
def test_a_key_is_rotated_by_issuing_a_new_one_then_revoking_the_old(
    caller: Client, keys: V1Keys, sim: SimControl
) -> None:
    old = keys.key("quotes:read", "webhooks:manage")
    assert re.match(KEY_SHAPE, str(old["key"])), old["key"]
    prefix = str(old["key"]).split(".", 1)[0]
    assert prefix == old["key_id"]  # the part before the dot is the id, safe to log
    listed = sim.call("GET", "keys")["keys"]
    mine = [k for k in listed if k["key_id"] == old["key_id"]]
    assert len(mine) == 1, listed
    assert "key" not in mine[0], "the full key is shown once, at creation"
    registered = assert_data(
        caller.post("/v1/webhooks", json=webhook_body(), headers=bearer(old)), 201
    )
    new = keys.key("quotes:read", "webhooks:manage")
    assert_data(_corridors(caller, bearer(new)))
    keys.revoke(old)
    assert_error(_corridors(caller, bearer(old)), 401, "unauthorized")
    # The partner's webhook endpoints stay reachable through the new key.
    listed_hooks = assert_data(caller.get("/v1/webhooks", headers=bearer(new)))
    assert [e["id"] for e in listed_hooks] == [registered["id"]]


# The v1 operations served here, with the request that exercises each and its success status.
OPERATIONS: dict[str, list[tuple[str, str, Any, int]]] = {
    "quotes:read": [("GET", "/v1/corridors", None, 200)],
    "webhooks:manage": [
        ("POST", "/v1/webhooks", "body", 201),
        ("GET", "/v1/webhooks", None, 200),
        ("DELETE", "/v1/webhooks/{id}", None, 200),
    ],
}


@pytest.mark.spec(
    "v1/endpoints/scopes-per-endpoint-authentication",
    "v1/auth/quotes-read",
    "v1/auth/webhooks-manage",
    "v1/auth/item-4",
    "v1/errors/403-forbidden",
    *ERRORS,
)
@pytest.mark.parametrize("scope", sorted(OPERATIONS))
def test_each_scope_grants_its_rows_and_nothing_else_does(
    caller: Client, keys: V1Keys, scope: str
) -> None:
    allowed = keys.key(scope)
    others = keys.lacking(scope)  # on a simulator: every other v1 scope
    for method, path, body, status in OPERATIONS[scope]:
        json_body = webhook_body() if body == "body" else None
        concrete = path
        if "{id}" in path:
            created = assert_data(
                caller.post("/v1/webhooks", json=webhook_body(), headers=bearer(allowed)), 201
            )
            concrete = path.replace("{id}", str(created["id"]))
        kwargs: dict[str, Any] = {"json": json_body} if json_body is not None else {}
        refused = caller.request(method, concrete, headers=bearer(others), **kwargs)
        error = assert_error(refused, 403, "forbidden", "missing_scope" if keys.sim else None)
        assert not keys.sim or error["details"] == {"reason": "missing_scope", "scope": scope}
        resp = caller.request(method, concrete, headers=bearer(allowed), **kwargs)
        assert_data(resp, status)


@pytest.mark.spec("v1/errors/401-unauthorized", "v1/errors/403-forbidden", "v1/auth/item-4")
def test_a_bad_key_is_401_before_any_scope_or_input_check(caller: Client) -> None:
    bad = {"Authorization": "Bearer tx_test_0123456789ab." + "A" * 43}
    assert_error(_corridors(caller, bad, chainId="not-a-number"), 401, "unauthorized")
    assert_error(caller.post("/v1/webhooks", json={}, headers=bad), 401, "unauthorized")


@pytest.mark.spec("v1/errors/403-forbidden", "v1/auth/item-4", "v1/auth/environments")
def test_a_missing_scope_is_403_before_input_and_environment_checks(
    caller: Client, keys: V1Keys
) -> None:
    writer = keys.lacking("quotes:read", "webhooks:manage")
    assert_error(_corridors(caller, bearer(writer), chainId="x"), 403, "forbidden")
    assert_error(_corridors(caller, bearer(writer), chainId=LIVE_CHAIN), 403, "forbidden")
    assert_error(caller.post("/v1/webhooks", json={}, headers=bearer(writer)), 403, "forbidden")


@pytest.mark.spec("v1/auth/environments", "v1/errors/400-invalid_request", *ERRORS)
@pytest.mark.parametrize(("environment", "chain_id"), [("test", LIVE_CHAIN), ("live", TEST_CHAIN)])
def test_a_chain_of_the_other_environment_is_400(
    caller: Client, keys: V1Keys, environment: str, chain_id: int
) -> None:
    key = keys.key("quotes:read", environment=environment)
    resp = _corridors(caller, bearer(key), chainId=chain_id)
    mine = keys.sim is not None  # details are rfqsim's (docs/decisions.md V1-V15)
    error = assert_error(resp, 400, "invalid_request", "environment_mismatch" if mine else None)
    assert not mine or (error.get("details") or {}).get("chainId") == chain_id, error


@pytest.mark.spec("v1/auth/environments", "v1/errors/400-invalid_request")
def test_keys_reach_the_chains_of_their_environment(caller: Client, keys: V1Keys) -> None:
    test_key = keys.key("quotes:read", environment="test")
    live_key = keys.key("quotes:read", environment="live")
    on_97 = assert_data(_corridors(caller, bearer(test_key), chainId=TEST_CHAIN))
    assert on_97, "chain 97 runs a live test corridor: it lists corridors"
    assert {c["chainId"] for c in on_97} == {TEST_CHAIN}
    on_56 = assert_data(_corridors(caller, bearer(live_key), chainId=LIVE_CHAIN))
    assert on_56
    assert {c["chainId"] for c in on_56} == {LIVE_CHAIN}
    # Without chainId each key sees its own environment's chains only (rfqsim serves one each).
    test_chains = {c["chainId"] for c in assert_data(_corridors(caller, bearer(test_key)))}
    live_chains = {c["chainId"] for c in assert_data(_corridors(caller, bearer(live_key)))}
    if keys.sim:
        assert (test_chains, live_chains) == ({TEST_CHAIN}, {LIVE_CHAIN})
    assert TEST_CHAIN in test_chains - live_chains, (test_chains, live_chains)
    assert LIVE_CHAIN in live_chains - test_chains, (test_chains, live_chains)


@pytest.mark.spec("v1/auth/environments", "v1/errors/400-invalid_request", *ERRORS)
def test_a_testnet_without_a_settlement_contract_is_400_saying_so(
    target: Target, caller: Client, keys: V1Keys
) -> None:
    if not target.controllable:
        pytest.skip(skip_message("sim_control", "the chains without contracts: /_sim/info"))
    undeployed = chains_without_contracts(target, "test")
    assert undeployed, "the simulator lists no test chain without contracts"
    test_key, live_key = keys.key("quotes:read"), keys.key("quotes:read", environment="live")
    for chain_id in undeployed:
        resp = _corridors(caller, bearer(test_key), chainId=chain_id)
        error = assert_error(resp, 400, "invalid_request", reason="no_settlement_contract")
        assert f"no settlement contract deployed on chain {chain_id}" in error["message"].lower()
        # A live key hears about its environment first.
        resp = _corridors(caller, bearer(live_key), chainId=chain_id)
        assert_error(resp, 400, "invalid_request", reason="environment_mismatch")
        # And a chain without contracts is no corridor of the environment.
        listed = assert_data(_corridors(caller, bearer(test_key)))
        assert chain_id not in {c["chainId"] for c in listed}


@pytest.mark.spec("v1/errors/400-invalid_request", "v1/endpoints/get-v1-corridors")
@pytest.mark.parametrize("chain_id", ["abc", "97.5", "0", "-97", ""])
def test_a_malformed_chain_id_is_400_naming_it(caller: Client, keys: V1Keys, chain_id: str) -> None:
    key = keys.key("quotes:read")
    error = assert_error(_corridors(caller, bearer(key), chainId=chain_id), 400, "invalid_request")
    issues = (error.get("details") or {}).get("issues") or []
    assert [i.get("field") for i in issues] == ["chainId"], error


@pytest.mark.spec("v1/errors/400-invalid_request", "v1/auth/environments")
def test_an_unknown_chain_is_400(caller: Client, keys: V1Keys) -> None:
    key = keys.key("quotes:read")
    resp = _corridors(caller, bearer(key), chainId=424242)
    assert_error(resp, 400, "invalid_request", "unknown_chain" if keys.sim else None)
