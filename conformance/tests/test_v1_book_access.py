"""Keys and scopes on the v1 book's endpoints (spec 3 "Authentication"): no key is 401, a key
without the endpoint's scope is 403, the scope of the table lets the call through; a key of the
other environment is 400. Every answer carries the error envelope of document 1.

Keys are made through /_sim/keys on a simulator (one per scope, holding only it); elsewhere they
are the QA team's: the key:v1, a key without each row's scope (skipped, naming it, when none is
given) and a live key."""

from __future__ import annotations

import pytest

from conformance.calls.v1_book import V1_SCOPES, v1_integrator
from conformance.calls.v1_calls import V1Keys, bearer
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_error
from rfqkit.wallets import Wallet

ZERO_HASH = "0x" + "00" * 32


def _keyed(
    target: Target, http: Client, scopes: list[str], environment: str = "test"
) -> tuple[Client, str]:
    """A client with a key of ``scopes`` (exactly those) and the key: made on a simulator (a
    partner of its own, unlimited tier), else given (its client paced)."""
    if target.controllable:
        made = v1_integrator(target.sim(), http, environment, scopes=scopes)
        return made.client, str(made.key["key"])
    key = V1Keys(target).key(*scopes, environment=environment, exact=True)
    return http.with_headers(bearer(key)).paced(), str(key["key"])


def _calls(chain: VenueChain) -> dict[str, tuple[str, str, dict[str, object] | None]]:
    """scope -> one call per endpoint it grants (method, path, query or body)."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    pair = {"chainId": chain.chain_id, "sellToken": usdc.address, "buyToken": ngns.address}
    return {
        "GET /v1/order-book": ("quotes:read", "/v1/order-book", pair),
        "GET /v1/quote": ("quotes:read", "/v1/quote", {**pair, "sellAmount": "1000500"}),
        "GET /v1/limit-orders/quote": (
            "quotes:read",
            "/v1/limit-orders/quote",
            {**pair, "sellAmount": "1000000"},
        ),
        "POST /v1/swaps": (
            "trades:write",
            "/v1/swaps",
            {**pair, "sellAmount": "1000500", "taker": Wallet.create().address},
        ),
        "POST /v1/swaps/{id}/submit": (
            "trades:write",
            "/v1/swaps/sw_000000000000000000000000/submit",
            {"txHash": ZERO_HASH},
        ),
        "POST /v1/limit-orders/prepare": (
            "trades:write",
            "/v1/limit-orders/prepare",
            {
                "chainId": chain.chain_id,
                "maker": Wallet.create().address,
                "sellToken": ngns.address,
                "sellAmount": "1500000000",
                "buyToken": usdc.address,
                "buyAmount": "1000000",
                "deadline": 2_000_000_000,
            },
        ),
        "POST /v1/limit-orders": ("trades:write", "/v1/limit-orders", {}),
        "GET /v1/swaps": ("trades:read", "/v1/swaps", {}),
        "GET /v1/swaps/{id}": ("trades:read", "/v1/swaps/sw_000000000000000000000000", {}),
        "GET /v1/limit-orders": (
            "trades:read",
            "/v1/limit-orders",
            {"chainId": chain.chain_id, "wallet": Wallet.create().address},
        ),
        "GET /v1/limit-orders/{id}": (
            "trades:read",
            "/v1/limit-orders/lo_000000000000000000000000",
            {},
        ),
    }


def _call(client: Client, name: str, path: str, payload: dict[str, object] | None) -> object:
    method = name.split()[0]
    if method == "GET":
        return client.get(path, params=payload or None)
    return client.post(path, json=payload or {})


@pytest.mark.spec(
    "v1/endpoints/scopes-per-endpoint-authentication",
    "v1/auth/quotes-read",
    "v1/auth/trades-write",
    "v1/auth/trades-read",
    "v1/auth/item-1",
    "v1/auth/item-4",
    "v1/errors/401-unauthorized",
    "v1/errors/403-forbidden",
    "v1/errors/same-envelope-document-1",
    "v1/versioning/item-1",
)
def test_every_book_endpoint_needs_a_key_with_its_scope(
    target: Target, http: Client, chain: VenueChain
) -> None:
    if not target.controllable:
        _given_keys_meet_the_scope_table(target, http, chain)
        return
    by_scope = {
        scope: _keyed(target, http, [scope])
        for scope in ("quotes:read", "trades:write", "trades:read", "webhooks:manage")
    }
    http = http if target.controllable else http.paced()
    for name, (scope, path, payload) in _calls(chain).items():
        resp = _call(http, name, path, payload)
        assert_error(resp, 401, "unauthorized")  # type: ignore[arg-type]
        for other, (client, _) in by_scope.items():
            resp = _call(client, name, path, payload)
            status = resp.status  # type: ignore[attr-defined]
            if other == scope:
                assert status not in (401, 403), (name, resp)
            else:
                assert_error(resp, 403, "forbidden")  # type: ignore[arg-type]
    # X-API-Key works like the bearer header.
    key = by_scope["quotes:read"][1]
    scope, path, payload = _calls(chain)["GET /v1/order-book"]
    resp = http.get(path, params=payload, headers={"X-API-Key": key})
    assert resp.status == 200, resp


def _given_keys_meet_the_scope_table(target: Target, http: Client, chain: VenueChain) -> None:
    """Without control: the given key:v1 passes every row, and for each row a given key
    without the row's scope (a key:read serves for most) is 403; every key is found before the
    first request, so a missing one skips the whole test."""
    keys = V1Keys(target)
    full = http.with_headers(bearer(keys.key(*V1_SCOPES))).paced()
    scopes = {scope for scope, _, _ in _calls(chain).values()}
    lacking = {s: http.with_headers(bearer(keys.lacking(s))).paced() for s in sorted(scopes)}
    http = http.paced()
    for name, (scope, path, payload) in _calls(chain).items():
        assert_error(_call(http, name, path, payload), 401, "unauthorized")  # type: ignore[arg-type]
        resp = _call(full, name, path, payload)
        assert resp.status not in (401, 403), (name, resp)  # type: ignore[attr-defined]
        assert_error(_call(lacking[scope], name, path, payload), 403, "forbidden")  # type: ignore[arg-type]


@pytest.mark.spec("v1/auth/environments", "v1/errors/400-invalid_request")
def test_a_key_of_the_other_environment_is_400(
    target: Target, http: Client, chain: VenueChain
) -> None:
    live, _ = _keyed(target, http, list(V1_SCOPES), "live")  # chain 97 is a test chain
    for name, (_, path, payload) in _calls(chain).items():
        if "chainId" not in (payload or {}) or name == "POST /v1/limit-orders":
            continue
        resp = _call(live, name, path, payload)
        assert_error(resp, 400, "invalid_request")  # type: ignore[arg-type]
