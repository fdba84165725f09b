"""Request-rate limits: the per-key (or per client IP) limiter, its headers, the IP backstop.

Tests that lower limits do it through ``PUT /_sim/limits`` in the ``limits`` fixture, which
empties the windows and restores the original values (and empties the windows again)
afterwards. Every test sends from loopback addresses of its own, so the per-IP buckets it
fills belong to nobody else; keys are issued per test and revoked afterwards.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from eth_account import Account

from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.client import (
    Client,
    Response,
    fresh_loopback_address,
    is_loopback_url,
    on_one_connection,
)
from conformance.wire.response_checks import (
    assert_data,
    assert_error,
    assert_no_rate_limit_headers,
    assert_rate_limit_headers,
    assert_retry_after,
)


@pytest.fixture
def http(http: Client) -> Iterator[Client]:
    """One instance's counts and cache: conftest.py `on_one_connection`."""
    yield from on_one_connection(http)


CHAIN = 97
ONE_TOKEN = 10**18
WINDOW_SECONDS = 60

LimitSetter = Callable[..., dict[str, Any]]
KeyFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def new_caller(target: Target, http: Client) -> Callable[[], Client]:
    """Makes clients, each from a loopback address no other test uses."""
    if not is_loopback_url(target.base_url):
        pytest.skip("per-IP limits need a target on 127.0.0.0/8 to choose client IPs")

    def make() -> Client:
        return http.from_address(fresh_loopback_address())

    return make


@pytest.fixture
def limits(sim: SimControl) -> Iterator[LimitSetter]:
    """Sets limits for this test (windows emptied); restores the original ones afterwards."""
    original = sim.limits()

    def set_limits(**values: Any) -> dict[str, Any]:
        if "tiers" in values:
            values["tiers"] = {**original["tiers"], **values["tiers"]}
        return sim.set_limits(**values, reset_windows=True)

    try:
        yield set_limits
    finally:
        sim.set_limits(**original, reset_windows=True)


@pytest.fixture
def new_key(sim: SimControl) -> Iterator[KeyFactory]:
    """Issues test-environment trader keys for this test's own partner; revokes them after."""
    partner = f"conformance-limits-{secrets.token_hex(6)}"
    issued: list[str] = []

    def make(**extra: Any) -> dict[str, Any]:
        record = sim.create_key(partner, "test", ("trades:write", "trades:read"), **extra)
        issued.append(str(record["key_id"]))
        return record

    yield make
    for key_id in issued:
        sim.call("POST", f"keys/{key_id}/revoke")


def _bearer(key: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


def _token(target: Target, symbol: str) -> str:
    for token in target.chain(CHAIN).get("tokens") or []:
        if token.get("symbol") == symbol:
            return str(token["address"])
    raise KeyError(f"no {symbol} on chain {CHAIN}")


def _body(target: Target, *, taker: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": CHAIN,
        "sellToken": _token(target, "USDT"),
        "buyToken": _token(target, "NGNS"),
        "sellAmount": str(ONE_TOKEN),
        "restrictedLiquidityWallets": [Account.create().address],
    }
    if taker:
        wallets = target.wallets()
        assert wallets, "the simulator has no demo wallets"
        body["taker"] = wallets[0]["address"]
    return body


def _levels(client: Client, **kwargs: Any) -> Response:
    return client.get("/v2/rfq/levels", params={"chainId": CHAIN}, **kwargs)


def _assert_ok(resp: Response) -> Response:
    assert_data(resp)
    return resp


def _assert_limited(resp: Response, limit: int) -> int:
    """The per-key limiter's 429: envelope, Retry-After and X-RateLimit-* with nothing left."""
    assert_error(resp, 429, "rate_limited")
    retry_after = assert_retry_after(resp, WINDOW_SECONDS)
    got_limit, remaining, reset = assert_rate_limit_headers(resp)
    assert (got_limit, remaining) == (limit, 0), resp.headers
    assert 0 < reset <= WINDOW_SECONDS, f"X-RateLimit-Reset {reset}"
    return retry_after


def _assert_backstop(resp: Response) -> None:
    """The IP backstop's 429: envelope and Retry-After, no X-RateLimit-* (caller unknown)."""
    assert_error(resp, 429, "rate_limited")
    assert_retry_after(resp, WINDOW_SECONDS)
    assert_no_rate_limit_headers(resp)


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/request-rate",
    "rfq/limits/rate-limit-headers-responses-handled",
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/errors/429-rate_limited",
    "rfq/errors/envelope",
)
def test_keyless_calls_share_one_budget_per_client_ip(
    target: Target, limits: LimitSetter, new_caller: Callable[[], Client]
) -> None:
    limits(keyless_per_minute=3)
    caller, neighbour = new_caller(), new_caller()
    preview = caller.post("/v2/rfq/preview", json=_body(target, taker=False))
    assert_data(preview)
    levels = _levels(caller)
    assert_data(levels)
    # Errors count too: an unproven firm request is answered by the service after the limiter.
    unproven = caller.post("/v2/rfq/request", json=_body(target))
    assert_error(unproven, 401, "unauthorized", "proof_of_control_required")
    remaining = [assert_rate_limit_headers(r)[:2] for r in (preview, levels, unproven)]
    assert remaining == [(3, 2), (3, 1), (3, 0)], remaining
    for resp in (preview, levels, unproven):
        assert 0 < assert_rate_limit_headers(resp)[2] <= WINDOW_SECONDS, resp.headers
    # The 4th call of the window, whatever the endpoint and before any ownership check.
    _assert_limited(caller.get("/v2/rfq/rfq_000000000000000000000000"), 3)
    _assert_limited(_levels(caller), 3)
    # Another client IP has its own bucket.
    assert assert_rate_limit_headers(_assert_ok(_levels(neighbour)))[:2] == (3, 2)


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/api-keys/key-gives-own-rate-limit",
    "rfq/limits/request-rate",
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/errors/429-rate_limited",
)
def test_each_key_has_its_own_budget(
    target: Target,
    limits: LimitSetter,
    new_key: KeyFactory,
    new_caller: Callable[[], Client],
) -> None:
    current = limits(keyless_per_minute=5, tiers={"default": 2})
    caller = new_caller()
    first, second, high = new_key(), new_key(), new_key(tier="high")
    for expected_remaining in (1, 0):
        resp = caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(first))
        assert_data(resp)
        assert assert_rate_limit_headers(resp)[:2] == (2, expected_remaining)
    _assert_limited(caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(first)), 2)
    _assert_limited(_levels(caller, headers=_bearer(first)), 2)
    # Same client IP: the keyless bucket and another key of the same partner are untouched.
    assert assert_rate_limit_headers(_assert_ok(_levels(caller)))[:2] == (5, 4)
    resp = caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(second))
    assert assert_rate_limit_headers(_assert_ok(resp))[:2] == (2, 1)
    # A key on another tier gets that tier's ceiling.
    resp = _levels(caller, headers=_bearer(high))
    high_limit = current["tiers"]["high"]
    assert assert_rate_limit_headers(_assert_ok(resp))[:2] == (high_limit, high_limit - 1)


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/rate-limit-headers-responses-handled",
    "rfq/limits/request-rate",
)
@pytest.mark.parametrize("keyed", [False, True], ids=["keyless", "key"])
def test_every_rfq_endpoint_carries_rate_limit_headers(
    target: Target,
    limits: LimitSetter,
    new_key: KeyFactory,
    new_caller: Callable[[], Client],
    keyed: bool,
) -> None:
    current = limits()
    caller = new_caller()
    if keyed:
        caller = caller.with_headers(_bearer(new_key()))
        ceiling = current["tiers"]["default"]
        created = assert_data(caller.post("/v2/rfq/request", json=_body(target)))
        rfq_id, first_status = created["rfqId"], 200
    else:
        ceiling = current["keyless_per_minute"]
        rfq_id, first_status = "rfq_000000000000000000000000", 401
    first = caller.post("/v2/rfq/request", json=_body(target))
    assert first.status == first_status, first
    tx_hash = "0x" + secrets.token_hex(32)
    responses = [
        first,
        caller.post("/v2/rfq/preview", json=_body(target, taker=False)),
        _levels(caller),
        caller.get(f"/v2/rfq/{rfq_id}"),
        caller.post(f"/v2/rfq/{rfq_id}/cancel"),
        caller.post(f"/v2/rfq/{rfq_id}/submit", json={"txHash": tx_hash}),
    ]
    # keyless: 401, 200, 200, 404, 404, 404; key: 200, 200, 200, 200, 409, 409
    expected = [first_status, 200, 200, 404, 404, 404] if not keyed else [200] * 4 + [409] * 2
    assert [r.status for r in responses] == expected, [r.describe() for r in responses]
    start = ceiling - (2 if keyed else 1)
    for offset, resp in enumerate(responses):
        limit, remaining, reset = assert_rate_limit_headers(resp)
        assert (limit, remaining) == (ceiling, start - offset), resp.describe()
        assert 0 < reset <= WINDOW_SECONDS, resp.describe()


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/limits/rate-limit-headers-responses-handled",
    "rfq/errors/429-502-503-transient",
)
def test_limit_window_reopens_after_retry_after(
    sim: SimControl, limits: LimitSetter, new_caller: Callable[[], Client]
) -> None:
    limits(keyless_per_minute=2)
    caller = new_caller()
    assert_data(_levels(caller))
    assert_data(_levels(caller))
    retry_after = _assert_limited(_levels(caller), 2)
    sim.advance(retry_after)
    resp = _levels(caller)
    assert_data(resp)
    assert assert_rate_limit_headers(resp)[:2] == (2, 1), "a new window starts full"


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/per-ip-ceiling-before-authentication",
    "rfq/limits/absent-responses-rejected-earlier",
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/errors/429-rate_limited",
)
def test_ip_backstop_answers_before_authentication(
    target: Target, limits: LimitSetter, new_key: KeyFactory, new_caller: Callable[[], Client]
) -> None:
    key = new_key()
    limits(ip_backstop_per_minute=3)
    caller, neighbour = new_caller(), new_caller()
    for _ in range(3):
        # An unknown path is counted like any other (no operation, no per-key limiter).
        resp = caller.get("/v2/no-such-resource")
        assert_error(resp, 404, "not_found")
        assert_no_rate_limit_headers(resp)
    # Over the ceiling every call from that IP is refused before anyone is identified.
    _assert_backstop(caller.get("/v2/no-such-resource"))
    _assert_backstop(_levels(caller))
    _assert_backstop(caller.post("/v2/rfq/request", json=_body(target), headers=_bearer(key)))
    _assert_backstop(_levels(caller, headers={"X-API-Key": "tx_test_000000000000.not-a-key"}))
    # Health checks and the OpenAPI document are outside the backstop (a load balancer's probes
    # are never throttled; docs/decisions.md C10).
    assert_data(caller.get("/v2/health"))
    assert caller.get("/v2/openapi.json").status == 200
    # Another client IP is not affected.
    assert_data(_levels(neighbour))


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/limits/rate-limit-headers-responses-handled",
    "rfq/endpoints/get-v2-health",
    "rfq/endpoints/get-v2-openapi-json",
)
def test_health_and_openapi_are_outside_the_limiter(
    limits: LimitSetter, new_key: KeyFactory, new_caller: Callable[[], Client]
) -> None:
    limits(keyless_per_minute=1)
    caller = new_caller()
    assert_data(_levels(caller))
    _assert_limited(_levels(caller), 1)
    key = new_key()
    for client in (caller, caller.with_headers(_bearer(key))):
        health = client.get("/v2/health")
        assert_data(health)
        assert_no_rate_limit_headers(health)
        openapi = client.get("/v2/openapi.json")
        assert openapi.status == 200, openapi
        assert_no_rate_limit_headers(openapi)
