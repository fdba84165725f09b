"""The webhook registry and /_sim/webhooks over real loopback HTTP on the app without chains,
and deliveries over real https to a receiver whose certificate comes from the local CA."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from openapi_spec_validator import validate

from rfqkit.webhook_receiver import (
    AsyncReceiver,
    ReceivedRequest,
)
from rfqsim.cli import build_parser
from simulator.api.http.appkeys import RFQ
from simulator.runtime.app import create_app
from simulator.serve_args import settings_from_args
from simulator.settings import load_settings
from tests.unit.webhook_fakes import rfq_event

Client = TestClient[web.Request, web.Application]
MakeClient = Callable[..., Awaitable[Client]]


@pytest.fixture
async def make_client(tmp_path: Path) -> AsyncIterator[MakeClient]:
    clients: list[Client] = []

    async def make(**webhooks: Any) -> Client:
        settings = load_settings(
            overrides={"seed": 5, "webhooks": {"state_dir": str(tmp_path / "state"), **webhooks}}
        )
        client = TestClient(TestServer(create_app(settings, start_chains=False), host="127.0.0.1"))
        await client.start_server()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


@pytest.fixture
async def client(make_client: MakeClient) -> Client:
    return await make_client()


async def _data(resp: ClientResponse, status: int = 200) -> Any:
    body = await resp.json()
    assert resp.status == status, body
    return body["data"]


async def _error(resp: ClientResponse, status: int, code: str) -> dict[str, Any]:
    body = await resp.json()
    assert resp.status == status, body
    assert body["error"]["code"] == code
    assert body["error"]["request_id"] == resp.headers["X-Request-Id"]
    return dict(body["error"])


async def _key(
    client: Client, partner: str = "p1", scopes: tuple[str, ...] = ("webhooks:manage",)
) -> dict[str, Any]:
    resp = await client.post(
        "/_sim/keys", json={"partner": partner, "environment": "test", "scopes": list(scopes)}
    )
    data: dict[str, Any] = await _data(resp, 201)
    return data


def _auth(key: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


async def _register(client: Client, key: dict[str, Any], url: str, *types: str) -> dict[str, Any]:
    resp = await client.post(
        "/v1/webhooks",
        json={"url": url, "eventTypes": list(types) or ["rfq.expired"]},
        headers=_auth(key),
    )
    data: dict[str, Any] = await _data(resp, 201)
    return data


# -- registry ------------------------------------------------------------------------------


async def test_create_list_delete(client: Client) -> None:
    key = await _key(client)
    created = await _register(
        client, key, "https://example.com/hook", "rfq.filled", "rfq.filled", "rfq.expired"
    )
    assert set(created) == {"id", "url", "eventTypes", "status", "signingSecret"}
    assert created["id"].startswith("whe_")
    assert created["signingSecret"].startswith("whsec_")
    assert created["eventTypes"] == ["rfq.filled", "rfq.expired"]
    assert created["status"] == "active"
    assert created["url"] == "https://example.com/hook"
    listed = await _data(await client.get("/v1/webhooks", headers={"X-API-Key": key["key"]}))
    assert listed == [{k: v for k, v in created.items() if k != "signingSecret"}]
    other_key_same_partner = await _key(client, "p1")
    assert (
        len(await _data(await client.get("/v1/webhooks", headers=_auth(other_key_same_partner))))
        == 1
    )
    resp = await client.delete(f"/v1/webhooks/{created['id']}", headers=_auth(key))
    assert await _data(resp) == {"id": created["id"], "deleted": True}
    await _error(
        await client.delete(f"/v1/webhooks/{created['id']}", headers=_auth(key)), 404, "not_found"
    )
    assert await _data(await client.get("/v1/webhooks", headers=_auth(key))) == []


async def test_another_partners_endpoint_is_not_found(client: Client) -> None:
    mine, theirs = await _key(client, "p1"), await _key(client, "p2")
    created = await _register(client, theirs, "https://example.com/theirs")
    await _error(
        await client.delete(f"/v1/webhooks/{created['id']}", headers=_auth(mine)), 404, "not_found"
    )
    assert await _data(await client.get("/v1/webhooks", headers=_auth(mine))) == []
    assert len(await _data(await client.get("/v1/webhooks", headers=_auth(theirs)))) == 1


async def test_keys_and_scopes(client: Client) -> None:
    error = await _error(await client.get("/v1/webhooks"), 401, "unauthorized")
    assert error["details"]["reason"] == "api_key_required"
    bad = {"Authorization": "Bearer tx_test_000000000000.notarealsecretnotarealsecretnotareal"}
    await _error(await client.post("/v1/webhooks", json={}, headers=bad), 401, "unauthorized")
    trader = await _key(client, scopes=("trades:write", "trades:read"))
    error = await _error(await client.get("/v1/webhooks", headers=_auth(trader)), 403, "forbidden")
    assert error["details"] == {"reason": "missing_scope", "scope": "webhooks:manage"}
    await _error(await client.delete("/v1/webhooks/whe_x", headers=_auth(trader)), 403, "forbidden")


async def test_validation(client: Client) -> None:
    key = await _key(client)
    headers = _auth(key)

    async def post(body: Any) -> dict[str, Any]:
        return await _error(
            await client.post("/v1/webhooks", json=body, headers=headers), 400, "invalid_request"
        )

    error = await post({"url": "http://example.com/hook", "eventTypes": ["rfq.filled"]})
    assert error["details"]["reason"] == "https_required"
    # The way out is in the message: the local https receiver, or the developer flag.
    assert "rfqsim webhooks listen" in error["message"]
    assert "--allow-http-webhooks" in error["message"]
    for body, field in (
        ({"url": "https://example.com/", "eventTypes": ["rfq.nope"]}, "eventTypes"),
        ({"url": "https://example.com/", "eventTypes": []}, "eventTypes"),
        ({"url": "https://example.com/", "eventTypes": "rfq.filled"}, "eventTypes"),
        ({"url": "https://example.com/"}, "eventTypes"),
        ({"url": "not a url", "eventTypes": ["rfq.filled"]}, "url"),
        ({"url": "https://", "eventTypes": ["rfq.filled"]}, "url"),
        ({"url": 7, "eventTypes": ["rfq.filled"]}, "url"),
        ({"url": "https://example.com/", "eventTypes": ["rfq.filled"], "extra": 1}, "extra"),
    ):
        error = await post(body)
        assert field in [issue["loc"][0] for issue in error["details"]["issues"]], (body, error)
    resp = await client.post(
        "/v1/webhooks", data=b"{nope", headers={**headers, "Content-Type": "application/json"}
    )
    error = await _error(resp, 400, "invalid_request")
    assert error["details"]["issues"][0]["type"] == "json_invalid"


async def test_http_only_with_the_developer_flag(make_client: MakeClient) -> None:
    client = await make_client(allow_http=True)
    created = await _register(client, await _key(client), "http://127.0.0.1:9/hook")
    assert created["url"] == "http://127.0.0.1:9/hook"


async def test_openapi_lists_the_registry_in_v2_with_its_errors(client: Client) -> None:
    doc = await (await client.get("/v2/openapi.json")).json()
    validate(doc)
    post = doc["paths"]["/v1/webhooks"]["post"]
    assert set(post["responses"]) == {"201", "400", "401", "403", "413", "429", "500"}
    assert set(doc["paths"]["/v1/webhooks"]["get"]["responses"]) == {
        "200",
        "401",
        "403",
        "429",
        "500",
    }
    delete = doc["paths"]["/v1/webhooks/{endpoint_id}"]["delete"]
    assert set(delete["responses"]) == {"200", "401", "403", "404", "429", "500"}
    created = doc["components"]["schemas"]["WebhookEndpointCreated"]
    assert "signingSecret" in created["required"]
    assert "signingSecret" not in doc["components"]["schemas"]["WebhookEndpoint"]["properties"]
    sim = await (await client.get("/_sim/openapi.json")).json()
    validate(sim)
    for path in ("/_sim/webhooks/deliveries", "/_sim/webhooks/faults", "/_sim/webhooks/ca"):
        assert path in sim["paths"]


# -- /_sim/webhooks ---------------------------------------------------------------------------


async def test_faults_switches(client: Client) -> None:
    off = {"duplicate": False, "delay_ms": 0, "drop_first": 0}
    assert await _data(await client.get("/_sim/webhooks/faults")) == off
    on = await _data(
        await client.post("/_sim/webhooks/faults", json={"duplicate": True, "drop_first": 2})
    )
    assert on == {"duplicate": True, "delay_ms": 0, "drop_first": 2}
    on = await _data(await client.post("/_sim/webhooks/faults", json={"delay_ms": 10}))
    assert on == {"duplicate": True, "delay_ms": 10, "drop_first": 2}
    await _error(
        await client.post("/_sim/webhooks/faults", json={"delay_ms": -1}), 400, "invalid_request"
    )
    assert await _data(await client.delete("/_sim/webhooks/faults")) == off


async def test_ca_and_certificates(client: Client) -> None:
    ca = (await _data(await client.get("/_sim/webhooks/ca")))["ca_pem"]
    issued = await _data(
        await client.post("/_sim/webhooks/certificates", json={"hostnames": ["localhost"]})
    )
    assert issued["ca_pem"] == ca
    assert issued["cert_pem"].startswith("-----BEGIN CERTIFICATE-----")
    default = await _data(await client.post("/_sim/webhooks/certificates", json={}))
    assert default["ca_pem"] == ca
    for hostnames in ([], ["bad host"], ["-x.example"], ["a" * 300]):
        resp = await client.post("/_sim/webhooks/certificates", json={"hostnames": hostnames})
        await _error(resp, 400, "invalid_request")


async def test_deliveries_unknown_redeliver_is_404(client: Client) -> None:
    await _error(
        await client.post("/_sim/webhooks/deliveries/whd_nope/redeliver"), 404, "not_found"
    )
    assert await _data(await client.get("/_sim/webhooks/deliveries")) == {"deliveries": []}
    await _error(await client.get("/_sim/webhooks/deliveries?status=nope"), 400, "invalid_request")


# -- delivery over https -------------------------------------------------------------------


async def _receiver(
    client: Client, respond: Callable[[ReceivedRequest], Awaitable[int]] | None = None
) -> AsyncReceiver:
    cert = await _data(
        await client.post("/_sim/webhooks/certificates", json={"hostnames": ["127.0.0.1"]})
    )
    receiver = AsyncReceiver(cert_pem=cert["cert_pem"], key_pem=cert["key_pem"], respond=respond)
    await receiver.start()
    return receiver


async def _wait(predicate: Callable[[], Awaitable[bool]], within_s: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not await predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def _deliveries(client: Client, **query: str) -> list[dict[str, Any]]:
    data = await _data(await client.get("/_sim/webhooks/deliveries", params=query))
    deliveries: list[dict[str, Any]] = data["deliveries"]
    return deliveries


async def test_an_event_reaches_the_partners_https_endpoint_signed(client: Client) -> None:
    receiver = await _receiver(client)
    try:
        key = await _key(client)
        endpoint = await _register(client, key, receiver.url, "rfq.expired")
        event = rfq_event("rfq.expired", "rfq_x", key["partner_id"])
        client.app[RFQ].events.publish(event)
        await _wait(lambda: _true(len(receiver.requests) == 1))
        (got,) = receiver.requests
        assert got.method == "POST"
        assert got.path == "/webhooks"
        assert got.header("Content-Type") == "application/json"
        assert got.header("Service-Event-Id") == "rfq.expired:rfq_x"
        t, v1 = (
            part.split("=", 1)[1] for part in (got.header("Service-Signature") or "").split(",")
        )
        mac = hmac.new(
            endpoint["signingSecret"].encode(), t.encode() + b"." + got.raw_body, hashlib.sha256
        )
        assert hmac.compare_digest(mac.hexdigest(), v1)
        assert got.json() == event.body
        (delivery,) = await _deliveries(client, endpoint_id=endpoint["id"])
        assert delivery["status"] == "delivered"
        assert delivery["event_id"] == "rfq.expired:rfq_x"
        assert delivery["attempts"][0]["response_status"] == 200
        redone = await _data(
            await client.post(f"/_sim/webhooks/deliveries/{delivery['id']}/redeliver")
        )
        assert [a["manual"] for a in redone["attempts"]] == [False, True]
        assert len(receiver.requests) == 2
        assert receiver.requests[1].raw_body == got.raw_body
    finally:
        await receiver.stop()


async def _true(value: bool) -> bool:
    return value


async def test_a_500_is_retried_when_the_clock_advances(client: Client) -> None:
    answers = [500]

    async def respond(_: ReceivedRequest) -> int:
        return answers.pop(0) if answers else 200

    receiver = await _receiver(client, respond)
    try:
        key = await _key(client)
        await _register(client, key, receiver.url, "rfq.expired")
        client.app[RFQ].events.publish(rfq_event("rfq.expired", "rfq_y", key["partner_id"]))
        await _wait(lambda: _true(len(receiver.requests) == 1))
        (delivery,) = await _deliveries(client, event_id="rfq.expired:rfq_y")
        assert delivery["status"] == "pending"
        assert delivery["next_attempt_at"] is not None
        await _data(await client.post("/_sim/clock/advance", json={"seconds": 5}))
        await _wait(lambda: _true(len(receiver.requests) == 2))
        assert receiver.requests[0].raw_body == receiver.requests[1].raw_body
        await _wait(lambda: _status(client, "rfq.expired:rfq_y", "delivered"))
    finally:
        await receiver.stop()


async def _status(client: Client, event_id: str, status: str) -> bool:
    (delivery,) = await _deliveries(client, event_id=event_id)
    return bool(delivery["status"] == status)


async def test_an_untrusted_certificate_is_a_failed_attempt(client: Client, tmp_path: Path) -> None:
    stranger = trustme.CA().issue_cert("127.0.0.1")
    receiver = AsyncReceiver(
        cert_pem=b"".join(p.bytes() for p in stranger.cert_chain_pems),
        key_pem=stranger.private_key_pem.bytes(),
    )
    await receiver.start()
    try:
        key = await _key(client)
        await _register(client, key, receiver.url, "rfq.expired")
        client.app[RFQ].events.publish(rfq_event("rfq.expired", "rfq_z", key["partner_id"]))

        async def attempted() -> bool:
            (delivery,) = await _deliveries(client, event_id="rfq.expired:rfq_z")
            return bool(delivery["attempts"])

        await _wait(attempted)
        (delivery,) = await _deliveries(client, event_id="rfq.expired:rfq_z")
        (attempt,) = delivery["attempts"]
        assert attempt["outcome"] == "failed"
        assert attempt["response_status"] is None
        assert attempt["error"].startswith("connection_error")
        assert "ertificate" in attempt["error"]
        assert receiver.requests == []
    finally:
        await receiver.stop()


async def test_no_answer_within_the_ack_timeout_is_a_failed_attempt(
    make_client: MakeClient,
) -> None:
    client = await make_client(ack_timeout_s=0.3)

    async def hang(_: ReceivedRequest) -> int:
        await asyncio.sleep(10)
        return 200

    receiver = await _receiver(client, hang)
    try:
        key = await _key(client)
        await _register(client, key, receiver.url, "rfq.expired")
        client.app[RFQ].events.publish(rfq_event("rfq.expired", "rfq_t", key["partner_id"]))

        async def attempted() -> bool:
            (delivery,) = await _deliveries(client, event_id="rfq.expired:rfq_t")
            return bool(delivery["attempts"])

        await _wait(attempted)
        (delivery,) = await _deliveries(client, event_id="rfq.expired:rfq_t")
        (attempt,) = delivery["attempts"]
        assert (attempt["outcome"], attempt["error"]) == ("failed", "timeout")
        assert 250 <= attempt["latency_ms"] < 2000
        assert delivery["status"] == "pending"
    finally:
        await receiver.stop()


def test_serve_flag_allows_http_webhooks() -> None:
    parser = build_parser()
    args = parser.parse_args(["serve", "--allow-http-webhooks"])
    assert settings_from_args(args).webhooks.allow_http is True
    args = parser.parse_args(["serve"])
    assert settings_from_args(args).webhooks.allow_http is False
