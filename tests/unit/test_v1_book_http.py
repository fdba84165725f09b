"""The v1 book's HTTP surface on the app without chains: the v1 OpenAPI document generated from
the route table, keys and scopes on every operation, and the 400/404 answers that need no
chain."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from openapi_spec_validator import validate

from simulator import __version__
from simulator.api.http.appkeys import ACCESS, ROUTES
from simulator.api.http.openapi import build_openapi
from simulator.runtime.app import create_app
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]
ZERO = "0x" + "00" * 20

V1_OPERATIONS = {
    ("GET", "/v1/quote"): "quotes:read",
    ("GET", "/v1/order-book"): "quotes:read",
    ("GET", "/v1/limit-orders/quote"): "quotes:read",
    ("POST", "/v1/swaps"): "trades:write",
    ("POST", "/v1/swaps/{swap_id}/submit"): "trades:write",
    ("POST", "/v1/limit-orders"): "trades:write",
    ("POST", "/v1/limit-orders/prepare"): "trades:write",
    ("GET", "/v1/swaps"): "trades:read",
    ("GET", "/v1/swaps/{swap_id}"): "trades:read",
    ("GET", "/v1/limit-orders"): "trades:read",
    ("GET", "/v1/limit-orders/{order_id}"): "trades:read",
}


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 5}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


def key(client: Client, scopes: set[str], partner: str = "p") -> dict[str, str]:
    keys = client.app[ACCESS].keys
    owner = keys.partner_by_name(partner)
    _, full = keys.create_key(
        partner_id=owner.partner_id, environment="test", scopes=frozenset(scopes)
    )
    return {"Authorization": f"Bearer {full}"}


def test_the_v1_document_validates_and_declares_every_operation() -> None:
    app = create_app(load_settings(), start_chains=False)
    operations = app[ROUTES].for_document("v1")
    document = build_openapi(operations, "v1", __version__)
    validate(document)
    declared = {
        (op.method, op.path): op.access.scope
        for op in operations
        if op.access is not None and op.path not in ("/v1/webhooks", "/v1/webhooks/{endpoint_id}")
    }
    assert {k: v for k, v in declared.items() if k in V1_OPERATIONS} == V1_OPERATIONS
    for op in operations:
        if (op.method, op.path) in V1_OPERATIONS:
            assert op.access is not None
            assert op.access.keyless is False
    page = document["paths"]["/v1/swaps"]["get"]["responses"]["200"]
    assert page["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SwapPage"
    }
    create = document["paths"]["/v1/swaps"]["post"]["responses"]
    assert {"200", "201", "400", "401", "403", "429"} <= set(create)


@pytest.mark.parametrize(("method", "path"), sorted(V1_OPERATIONS))
async def test_every_v1_operation_needs_a_key_and_its_scope(
    client: Client, method: str, path: str
) -> None:
    url = path.replace("{swap_id}", "sw_x").replace("{order_id}", "lo_x")
    resp = await client.request(method, url, json={})
    assert resp.status == 401
    wrong = key(client, {"webhooks:manage"})
    resp = await client.request(method, url, json={}, headers=wrong)
    assert resp.status == 403
    body: dict[str, Any] = await resp.json()
    assert body["error"]["details"]["scope"] == V1_OPERATIONS[(method, path)]


async def test_bad_parameters_are_400_and_unknown_ids_404(client: Client) -> None:
    reader = key(client, {"quotes:read", "trades:read", "trades:write"})
    resp = await client.get(
        "/v1/limit-orders/quote",
        params={
            "chainId": 97,
            "sellToken": ZERO,
            "buyToken": ZERO,
            "sellAmount": "1",
            "marginBps": "1001",
        },
        headers=reader,
    )
    assert resp.status == 400
    issues = (await resp.json())["error"]["details"]["issues"]
    assert [i["field"] for i in issues] == ["marginBps"]
    resp = await client.get("/v1/swaps", params={"limit": "0"}, headers=reader)
    assert resp.status == 400
    resp = await client.get("/v1/swaps", params={"cursor": "not-ours"}, headers=reader)
    assert resp.status == 400
    assert (await resp.json())["error"]["details"]["reason"] == "invalid_cursor"
    for url in ("/v1/swaps/sw_unknown", "/v1/limit-orders/lo_unknown"):
        resp = await client.get(url, headers=reader)
        assert resp.status == 404, url
        assert (await resp.json())["error"]["code"] == "not_found"
    resp = await client.post(
        "/v1/swaps/sw_unknown/submit", json={"txHash": "0x" + "ab" * 32}, headers=reader
    )
    assert resp.status == 404
    resp = await client.get("/v1/limit-orders/prepare", headers=reader)
    assert resp.status == 405, "a concrete sibling is never read as an order id"
    # No chain is served here: any chainId is 400 unknown_chain (the one v1 chain check).
    resp = await client.get(
        "/v1/order-book",
        params={"chainId": 97, "sellToken": ZERO, "buyToken": ZERO},
        headers=reader,
    )
    assert resp.status == 400
    assert (await resp.json())["error"]["details"]["reason"] == "unknown_chain"


async def test_steering_lists_are_capped_and_never_combined(client: Client) -> None:
    writer = key(client, {"trades:write"})
    wallets = [f"0x{i:040x}" for i in range(1, 12)]
    body = {
        "chainId": 97,
        "sellToken": ZERO,
        "buyToken": ZERO,
        "sellAmount": "1",
        "taker": ZERO,
        "preferredLiquidityWallets": wallets,
    }
    resp = await client.post("/v1/swaps", json=body, headers=writer)
    assert resp.status == 400
    both = {
        **body,
        "preferredLiquidityWallets": wallets[:1],
        "restrictedLiquidityWallets": wallets[1:2],
    }
    resp = await client.post("/v1/swaps", json=both, headers=writer)
    assert resp.status == 400
