"""The v1 edge over real loopback HTTP on the app without chains (a venue filled by hand where
corridors are needed): keys and scopes on v1 paths, the environment 400s, /v1/status,
/v1/corridors, /v1/openapi.json, the start-up check of the scope table, and Idempotency-Key
with real parallel requests (a test-only operation whose handler waits for the test)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from openapi_spec_validator import validate

from simulator.api.http.appkeys import IDEMPOTENCY, OPERATIONS, ROUTES, VENUE
from simulator.api.http.routes import Access, Operation
from simulator.api.v1.access import check_v1_operations, v1_keyed, v1_problems
from simulator.errors import Conflict
from simulator.runtime.app import build_routes, create_app
from simulator.settings import load_settings
from tests.unit.services.v1_fakes import venue

Client = TestClient[web.Request, web.Application]
RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
SLOW_PATH = "/test/slow"


class SlowOperation:
    """A creating POST for the tests: each call waits until the test opens the gate, so a
    request stays in flight as long as the test wants."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.arrived = asyncio.Event()  # set when a request reaches the handler (key claimed)
        self.entered = 0
        self.calls = 0
        self.fail_with: Exception | None = None

    async def handler(self, request: web.Request) -> web.Response:
        self.entered += 1
        self.arrived.set()
        await self.gate.wait()
        self.calls += 1
        if self.fail_with is not None:
            raise self.fail_with
        body = await request.json()
        return web.json_response({"data": {"call": self.calls, "echo": body}}, status=201)


@pytest.fixture
def slow() -> SlowOperation:
    return SlowOperation()


@pytest.fixture
async def client(slow: SlowOperation) -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 7}), start_chains=False)
    operation = Operation(
        method="POST",
        path=SLOW_PATH,
        handler=slow.handler,
        operation_id="testSlowCreate",
        summary="test only",
        document="sim",
        access=Access(scope="trades:write", keyless=False),
        idempotent=True,
    )
    app.router.add_post(SLOW_PATH, slow.handler, name=operation.operation_id)
    app[OPERATIONS][operation.operation_id] = operation
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def _key(
    client: Client,
    *scopes: str,
    environment: str = "test",
    partner: str = "p1",
    **extra: Any,
) -> dict[str, Any]:
    resp = await client.post(
        "/_sim/keys",
        json={"partner": partner, "environment": environment, "scopes": list(scopes), **extra},
    )
    assert resp.status == 201, await resp.text()
    return dict((await resp.json())["data"])


def _auth(key: dict[str, Any], **more: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}", **more}


async def _error(resp: ClientResponse, status: int, code: str) -> dict[str, Any]:
    body = await resp.json()
    assert resp.status == status, body
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["request_id"] == resp.headers["X-Request-Id"]
    return dict(body["error"])


def _rate(resp: ClientResponse) -> tuple[int, int] | None:
    if not any(h in resp.headers for h in RATE_HEADERS):
        return None
    return int(resp.headers["X-RateLimit-Limit"]), int(resp.headers["X-RateLimit-Remaining"])


# -- keys and scopes -----------------------------------------------------------------------


async def test_v1_keyed_paths_refuse_missing_bad_and_inactive_keys_alike(client: Client) -> None:
    missing = await _error(await client.get("/v1/corridors"), 401, "unauthorized")
    assert missing["details"] == {"reason": "api_key_required"}
    key = await _key(client, "quotes:read")
    suspended = await _key(client, "quotes:read")
    revoked = await _key(client, "quotes:read")
    await client.post(f"/_sim/keys/{suspended['key_id']}/suspend")
    await client.post(f"/_sim/keys/{revoked['key_id']}/revoke")
    bodies = []
    for headers in (
        _auth(suspended),
        _auth(revoked),
        {"X-API-Key": key["key"][:-1] + ("a" if key["key"][-1] != "a" else "b")},
        {"Authorization": "Bearer tx_test_000000000000." + "x" * 43},
        {"X-API-Key": "nonsense"},
    ):
        resp = await client.get("/v1/corridors", headers=headers)
        error = await _error(resp, 401, "unauthorized")
        assert _rate(resp) is None  # refused before the per-key limiter
        bodies.append({k: v for k, v in error.items() if k != "request_id"})
    assert all(body == bodies[0] for body in bodies), bodies
    assert bodies[0]["details"] == {"reason": "invalid_api_key"}
    # Not a key at all: the same status, code and reason (only the sentence says why).
    resp = await client.get("/v1/corridors", headers={"Authorization": "Basic abc"})
    assert (await _error(resp, 401, "unauthorized"))["details"] == {"reason": "invalid_api_key"}


async def test_v1_scope_is_403_after_the_key_and_the_limiter(client: Client) -> None:
    trader = await _key(client, "trades:write", "trades:read", "webhooks:manage")
    resp = await client.get("/v1/corridors", headers=_auth(trader))
    error = await _error(resp, 403, "forbidden")
    assert error["details"] == {"reason": "missing_scope", "scope": "quotes:read"}
    assert _rate(resp) == (60, 59)
    maker = await _key(client, "maker:stream", maker_wallet="0x" + "12" * 20)
    await _error(await client.get("/v1/corridors", headers=_auth(maker)), 403, "forbidden")
    # X-API-Key works as well as Authorization: Bearer.
    reader = await _key(client, "quotes:read")
    resp = await client.get("/v1/corridors", headers={"X-API-Key": reader["key"]})
    assert resp.status == 200
    assert _rate(resp) == (60, 59)


async def test_v1_per_key_limit_is_429_with_retry_after(client: Client) -> None:
    await client.put("/_sim/limits", json={"tiers": {"default": 60, "tiny": 2}})
    key = await _key(client, "quotes:read", tier="tiny")
    for remaining in (1, 0):
        resp = await client.get("/v1/corridors", headers=_auth(key))
        assert resp.status == 200
        assert _rate(resp) == (2, remaining)
    resp = await client.get("/v1/corridors", headers=_auth(key))
    error = await _error(resp, 429, "rate_limited")
    assert error["message"] == "Rate limit exceeded"
    assert 1 <= int(resp.headers["Retry-After"]) <= 60
    assert _rate(resp) == (2, 0)
    # Another key keeps its own budget.
    other = await _key(client, "quotes:read")
    assert _rate(await client.get("/v1/corridors", headers=_auth(other))) == (60, 59)


async def test_put_limits_merges_tiers_and_refuses_with_details_issues(client: Client) -> None:
    before = (await (await client.get("/_sim/limits")).json())["data"]
    resp = await client.put("/_sim/limits", json={"tiers": {"unlimited": 5000}})
    assert resp.status == 200, await resp.text()
    tiers = (await resp.json())["data"]["tiers"]
    assert tiers == {**before["tiers"], "unlimited": 5000}  # merged, the others kept

    refused = await client.put("/_sim/limits", json={"tiers": {"default": 0}})
    error = await _error(refused, 400, "invalid_request")
    issues = error["details"]["issues"]
    assert [issue["field"] for issue in issues] == ["tiers"]
    assert issues[0]["message"] == "Value error, limits.tiers needs a positive 'default' tier"
    assert "pydantic" not in json.dumps(error)  # no raw pydantic text or documentation URL
    unchanged = (await (await client.get("/_sim/limits")).json())["data"]
    assert unchanged["tiers"] == tiers  # a refused update changes nothing

    wrong_type = await client.put("/_sim/limits", json={"tiers": {"high": "lots"}})
    error = await _error(wrong_type, 400, "invalid_request")
    assert [issue["field"] for issue in error["details"]["issues"]] == ["tiers.high"]


async def test_public_v1_paths_need_no_key_and_are_outside_the_limiter(client: Client) -> None:
    for path in ("/v1/health", "/v1/status", "/v1/openapi.json"):
        resp = await client.get(path)
        assert resp.status in (200, 503), path  # 503: this app runs no chain
        assert _rate(resp) is None


def test_the_route_table_matches_spec_3s_scope_table() -> None:
    table = build_routes()
    assert v1_problems(table.operations) == []
    v1_paths = {(op.method, op.path) for op in table.for_document("v1")}
    assert {
        ("GET", "/v1/health"),
        ("GET", "/v1/status"),
        ("GET", "/v1/openapi.json"),
        ("GET", "/v1/corridors"),
        ("POST", "/v1/webhooks"),
        ("GET", "/v1/webhooks"),
        ("DELETE", "/v1/webhooks/{endpoint_id}"),
    } <= v1_paths


def test_a_v1_operation_against_the_table_stops_the_start() -> None:
    table = build_routes()
    corridors = next(op for op in table.operations if op.operation_id == "v1Corridors")
    wrong_scope = replace(corridors, **v1_keyed("trades:read"))
    invented = replace(corridors, path="/v1/invented", operation_id="v1Invented")
    public = replace(corridors, access=None)
    health = next(op for op in table.operations if op.operation_id == "v1Health")
    keyed_health = replace(health, **v1_keyed("quotes:read"))
    problems = v1_problems([wrong_scope, invented, public, keyed_health])
    assert len(problems) == 4, problems
    assert "requires a key with quotes:read" in problems[0]
    assert "no new endpoints" in problems[1]
    assert "requires a key with quotes:read" in problems[2]
    assert "public in spec 3" in problems[3]
    with pytest.raises(RuntimeError, match="v1 routes against spec 3"):
        check_v1_operations([invented])


# -- environments and corridors ----------------------------------------------------------


@pytest.fixture
def with_venue(client: Client) -> Client:
    app = client.app
    assert app is not None
    app[VENUE].chains.update(venue().chains)
    return client


async def test_corridors_of_the_keys_environment(with_venue: Client) -> None:
    client = with_venue
    test_key = await _key(client, "quotes:read")
    live_key = await _key(client, "quotes:read", environment="live")
    resp = await client.get("/v1/corridors", headers=_auth(test_key))
    assert resp.status == 200
    corridors = (await resp.json())["data"]
    assert [(c["chainId"], c["pair"], c["mode"], c["feeBps"]) for c in corridors] == [
        (97, "USDT_NGNS", "RFQ", 5),
        (97, "USDC_NGNS", "BOOK", 7),
    ]
    assert corridors[1] == {
        "chainId": 97,
        "pair": "USDC_NGNS",
        "mode": "BOOK",
        "base": {"symbol": "USDC", "address": "0x" + "11" * 20, "decimals": 6},
        "quote": {"symbol": "NGNS", "address": "0x" + "22" * 20, "decimals": 6},
        "feeBps": 7,
        "reactor": "0x" + "bb" * 20,
        "signatureTransfer": "0x" + "aa" * 20,
    }
    one = await client.get("/v1/corridors", params={"chainId": "97"}, headers=_auth(test_key))
    assert (await one.json())["data"] == corridors
    live = await client.get("/v1/corridors", headers=_auth(live_key))
    assert {c["chainId"] for c in (await live.json())["data"]} == {56}


@pytest.mark.parametrize(
    ("environment", "chain_id", "reason"),
    [
        ("test", "56", "environment_mismatch"),
        ("live", "97", "environment_mismatch"),
        ("test", "11155111", "no_settlement_contract"),
        ("live", "11155111", "environment_mismatch"),
        ("test", "5", "unknown_chain"),
    ],
)
async def test_chains_a_key_cannot_use_are_400(
    with_venue: Client, environment: str, chain_id: str, reason: str
) -> None:
    key = await _key(with_venue, "quotes:read", environment=environment)
    resp = await with_venue.get("/v1/corridors", params={"chainId": chain_id}, headers=_auth(key))
    error = await _error(resp, 400, "invalid_request")
    assert error["details"] == {"reason": reason, "chainId": int(chain_id)}
    if reason == "no_settlement_contract":
        assert error["message"] == f"No settlement contract deployed on chain {chain_id}"


@pytest.mark.parametrize("value", ["abc", "0", "-1", "97.5", ""])
async def test_a_malformed_chain_id_is_400_naming_it(with_venue: Client, value: str) -> None:
    key = await _key(with_venue, "quotes:read")
    resp = await with_venue.get("/v1/corridors", params={"chainId": value}, headers=_auth(key))
    error = await _error(resp, 400, "invalid_request")
    assert [i["field"] for i in error["details"]["issues"]] == ["chainId"]


# -- /v1/status and /v1/openapi.json -------------------------------------------------------


async def test_status_without_chains_is_down_503_with_its_checks(client: Client) -> None:
    resp = await client.get("/v1/status")
    assert resp.status == 503
    data = (await resp.json())["data"]
    assert data["status"] == "down"
    assert data["checks"]["chain:97"] == {
        "status": "down",
        "critical": True,
        "chainId": 97,
        "reason": "not_started",
        "blockNumber": None,
    }
    assert set(data["checks"]) == {"chain:56", "fillIndex:56", "chain:97", "fillIndex:97"}


async def test_v1_openapi_document(client: Client) -> None:
    resp = await client.get("/v1/openapi.json")
    assert resp.status == 200
    document = await resp.json()
    validate(document)
    assert document["info"]["title"] == "Closed v1 API"
    assert not any(path.startswith(("/v2/", "/_sim/")) for path in document["paths"])
    corridors = document["paths"]["/v1/corridors"]["get"]
    assert corridors["security"] == [{"bearerKey": []}, {"apiKeyHeader": []}]
    assert set(corridors["responses"]) == {"200", "400", "401", "403", "429", "500"}
    assert [p["name"] for p in corridors["parameters"]] == ["chainId"]
    assert "security" not in document["paths"]["/v1/status"]["get"]
    assert set(document["paths"]["/v1/status"]["get"]["responses"]) >= {"200", "503"}
    create = document["paths"]["/v1/webhooks"]["post"]
    assert [p["name"] for p in create["parameters"]] == ["Idempotency-Key"]
    assert "409" in create["responses"]
    # The v2 document lists the shared registry as spec 1 does: no Idempotency-Key there.
    v2 = await (await client.get("/v2/openapi.json")).json()
    assert "parameters" not in v2["paths"]["/v1/webhooks"]["post"]
    assert "/v1/corridors" not in v2["paths"]
    app = client.app
    assert app is not None
    ops = app[ROUTES].for_document("v1")
    assert {op.path for op in ops} == set(document["paths"])


# -- Idempotency-Key -----------------------------------------------------------------------

Post = Callable[..., Coroutine[Any, Any, ClientResponse]]


@pytest.fixture
async def trader(client: Client) -> dict[str, Any]:
    return await _key(client, "trades:write", "webhooks:manage")


def _post(client: Client, key: dict[str, Any], idem: str | None) -> Post:
    async def post(body: Any, path: str = SLOW_PATH, **headers: str) -> ClientResponse:
        extra = {"Idempotency-Key": idem} if idem is not None else {}
        return await client.post(path, json=body, headers=_auth(key, **extra, **headers))

    return post


async def _wait_in_flight(client: Client, slow: SlowOperation) -> None:
    """Until the first request has claimed its key and is held in the handler."""
    await asyncio.wait_for(slow.arrived.wait(), 10)
    app = client.app
    assert app is not None
    assert [r.in_flight for r in await app[IDEMPOTENCY].records()] == [True]


async def test_a_retry_replays_the_first_response_byte_for_byte(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    slow.gate.set()
    post = _post(client, trader, "k-1")
    first = await post({"a": 1, "b": [1, 2]})
    first_body = await first.read()
    assert first.status == 201
    assert "Idempotent-Replayed" not in first.headers
    retry = await post({"b": [1, 2], "a": 1})  # the same body, serialized differently
    assert retry.status == 201
    assert await retry.read() == first_body
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    assert retry.headers["Content-Type"] == first.headers["Content-Type"]
    assert _rate(first) == (60, 59)
    assert _rate(retry) == (60, 58)
    assert slow.calls == 1
    # Without the header every request runs.
    assert (await _post(client, trader, None)({"a": 1})).status == 201
    assert slow.calls == 2


async def test_another_body_under_the_key_is_400_and_scopes_are_key_and_path(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    slow.gate.set()
    post = _post(client, trader, "k-2")
    assert (await post({"a": 1})).status == 201
    error = await _error(await post({"a": 2}), 400, "invalid_request")
    assert error["details"] == {"reason": "idempotency_key_reused"}
    assert slow.calls == 1
    # Another key of the same partner, or another path, has its own "k-2".
    other = await _key(client, "trades:write", "webhooks:manage")
    assert (await _post(client, other, "k-2")({"a": 2})).status == 201
    body = {"url": "https://example.com/hook", "eventTypes": ["swap.filled"]}
    assert (await post(body, path="/v1/webhooks")).status == 201
    assert slow.calls == 2


async def test_the_same_key_in_flight_is_409_for_parallel_requests(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    post = _post(client, trader, "k-3")
    first = asyncio.create_task(post({"a": 1}))
    await _wait_in_flight(client, slow)
    parallel = await asyncio.gather(*(post({"a": 1}) for _ in range(5)), post({"a": 9}))
    for resp in parallel:
        error = await _error(resp, 409, "conflict")
        assert error["details"] == {"reason": "idempotency_key_in_flight"}
    assert slow.entered == 1
    slow.gate.set()
    done = await first
    assert done.status == 201
    replay = await post({"a": 1})
    assert await replay.read() == await done.read()
    assert slow.calls == 1


async def test_many_parallel_first_requests_run_once(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    post = _post(client, trader, "k-4")
    racing = [asyncio.create_task(post({"a": 1})) for _ in range(20)]
    await _wait_in_flight(client, slow)
    # Every request that lost the claim has been answered 409 by now, or is still waiting to be
    # read by the server; open the gate and collect them all.
    slow.gate.set()
    answers = await asyncio.gather(*racing)
    statuses = sorted(r.status for r in answers)
    assert statuses.count(201) >= 1
    assert set(statuses) <= {201, 409}
    bodies = {await r.read() for r in answers if r.status == 201}
    assert len(bodies) == 1  # the winner's body, replayed to any that came after it finished
    assert slow.calls == 1


async def test_validation_failures_and_server_errors_are_not_stored(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    slow.gate.set()
    post = _post(client, trader, "k-5")
    # A schema failure on a real creating POST: nothing is stored, the key is free.
    bad = await post({"url": "http://example.com/x", "eventTypes": ["swap.filled"]}, "/v1/webhooks")
    await _error(bad, 400, "invalid_request")
    good = {"url": "https://example.com/x", "eventTypes": ["swap.filled"]}
    assert (await post(good, "/v1/webhooks")).status == 201
    # A 5xx is not stored either: the retry runs again.
    slow.fail_with = RuntimeError("boom")
    await _error(await post({"a": 1}), 500, "internal")
    slow.fail_with = None
    assert (await post({"a": 1})).status == 201
    assert slow.calls == 2


async def test_a_stored_error_is_replayed_under_its_own_request_id(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    slow.gate.set()
    slow.fail_with = Conflict("Not now", details={"reason": "test"})
    post = _post(client, trader, "k-6")
    first = await post({"a": 1})
    first_error = await _error(first, 409, "conflict")
    slow.fail_with = None
    retry = await post({"a": 1})
    assert await _error(retry, 409, "conflict") == first_error
    assert await retry.read() == await first.read()
    assert slow.calls == 1


async def test_keys_are_kept_24_hours_of_simulator_time(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    slow.gate.set()
    post = _post(client, trader, "k-7")
    assert (await post({"a": 1})).status == 201
    await client.post("/_sim/clock/advance", json={"seconds": 86_400 - 60})
    assert (await post({"a": 1})).headers.get("Idempotent-Replayed") == "true"
    await client.post("/_sim/clock/advance", json={"seconds": 60})
    fresh = await post({"a": 2})
    assert fresh.status == 201
    assert "Idempotent-Replayed" not in fresh.headers
    assert slow.calls == 2


@pytest.mark.parametrize("value", ["", "x" * 256, "tab\there", "caf\u00e9"])
async def test_a_malformed_key_is_400(
    client: Client, slow: SlowOperation, trader: dict[str, Any], value: str
) -> None:
    slow.gate.set()
    resp = await client.post(
        SLOW_PATH,
        data=b"{}",
        headers={**_auth(trader), "Content-Type": "application/json", "Idempotency-Key": value},
    )
    error = await _error(resp, 400, "invalid_request")
    assert error["details"] == {"reason": "idempotency_key_invalid"}
    assert slow.calls == 0


async def test_keys_are_checked_before_a_replay(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    slow.gate.set()
    post = _post(client, trader, "k-8")
    assert (await post({"a": 1})).status == 201
    await client.post(f"/_sim/keys/{trader['key_id']}/revoke")
    await _error(await post({"a": 1}), 401, "unauthorized")


async def test_sim_lists_the_records(
    client: Client, slow: SlowOperation, trader: dict[str, Any]
) -> None:
    post = _post(client, trader, "k-9")
    first = asyncio.create_task(post({"a": 1}))
    await _wait_in_flight(client, slow)
    listed = (await (await client.get("/_sim/idempotency")).json())["data"]["records"]
    assert [(r["key"], r["state"], r["status"], r["path"]) for r in listed] == [
        ("k-9", "in_flight", None, SLOW_PATH)
    ]
    assert listed[0]["caller"] == f"key:{trader['key_id']}"
    slow.gate.set()
    await first
    listed = (await (await client.get("/_sim/idempotency")).json())["data"]["records"]
    assert [(r["state"], r["status"]) for r in listed] == [("finished", 201)]
