"""v1 request-rate limits (spec 3 "Limits" item 1, "Errors" 429): the per-key limiter's
X-RateLimit-* headers on every response it handles (successes and errors alike), 429 with
Retry-After and the message "Rate limit exceeded", the default tier of 60 per minute, and the
per-IP ceiling before authentication.

Limits are lowered through ``PUT /_sim/limits`` and restored afterwards (windows emptied);
requests leave from loopback addresses of the test's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.client import (
    Client,
    Response,
    fresh_loopback_address,
    is_loopback_url,
)
from conformance.response_checks import (
    assert_data,
    assert_error,
    assert_no_rate_limit_headers,
    assert_rate_limit_headers,
    assert_retry_after,
)
from conformance.sim_control import (
    SimControl,
)
from conformance.target import Target
from conformance.v1_calls import V1Keys, bearer, v1_keys, webhook_body

pytestmark = pytest.mark.sim_only  # keys and limits come from /_sim

WINDOW_S = 60
LIMIT_RULES = ("v1/limits/per-key-rate-limit", "v1/errors/429-rate_limited")
LimitSetter = Callable[..., dict[str, Any]]


@pytest.fixture
def keys(target: Target) -> Iterator[V1Keys]:
    with v1_keys(target) as issued:
        yield issued


@pytest.fixture
def new_caller(target: Target, http: Client) -> Callable[[], Client]:
    if not is_loopback_url(target.base_url):
        pytest.skip("per-IP limits need a target on 127.0.0.0/8 to choose client IPs")
    return lambda: http.from_address(fresh_loopback_address())


@pytest.fixture
def limits(sim: SimControl) -> Iterator[LimitSetter]:
    original = sim.limits()

    def set_limits(**values: Any) -> dict[str, Any]:
        if "tiers" in values:
            values["tiers"] = {**original["tiers"], **values["tiers"]}
        return sim.set_limits(**values, reset_windows=True)

    try:
        yield set_limits
    finally:
        sim.set_limits(**original, reset_windows=True)


def _limited(resp: Response, limit: int) -> int:
    error = assert_error(resp, 429, "rate_limited")
    assert error["message"] == "Rate limit exceeded", error
    retry_after = assert_retry_after(resp, WINDOW_S)
    got_limit, remaining, reset = assert_rate_limit_headers(resp)
    assert (got_limit, remaining) == (limit, 0), resp.headers
    assert 0 < reset <= WINDOW_S
    return retry_after


@pytest.mark.spec("v1/limits/per-key-rate-limit")
def test_every_keyed_v1_response_carries_the_limiters_headers(
    limits: LimitSetter, keys: V1Keys, new_caller: Callable[[], Client]
) -> None:
    current = limits()
    ceiling = current["tiers"]["default"]
    assert ceiling == 60, "the default tier is 60 requests per minute"
    caller = new_caller()
    key = keys.key("quotes:read", "webhooks:manage")
    headers = bearer(key)
    responses = [
        caller.get("/v1/corridors", headers=headers),  # 200
        caller.get("/v1/corridors", headers=headers, params={"chainId": 56}),  # 400 env
        caller.get("/v1/corridors", headers=headers, params={"chainId": "x"}),  # 400 schema
        caller.post("/v1/webhooks", json=webhook_body(), headers=headers),  # 201
        caller.post("/v1/webhooks", json={}, headers=headers),  # 400
        caller.get("/v1/webhooks", headers=headers),  # 200
        caller.delete("/v1/webhooks/whe_000000000000", headers=headers),  # 404
    ]
    assert [r.status for r in responses] == [200, 400, 400, 201, 400, 200, 404], [
        r.describe() for r in responses
    ]
    for offset, resp in enumerate(responses):
        limit, remaining, reset = assert_rate_limit_headers(resp)
        assert (limit, remaining) == (ceiling, ceiling - 1 - offset), resp.describe()
        assert 0 < reset <= WINDOW_S
    # A 403 is counted on the key's own budget too.
    reader = keys.key("quotes:read")
    refused = caller.get("/v1/webhooks", headers=bearer(reader))
    assert_error(refused, 403, "forbidden")
    assert assert_rate_limit_headers(refused)[:2] == (ceiling, ceiling - 1)
    # Without a key the caller is counted by client IP (401 after the limiter)...
    missing = caller.get("/v1/corridors")
    assert_error(missing, 401, "unauthorized")
    keyless = current["keyless_per_minute"]
    assert assert_rate_limit_headers(missing)[:2] == (keyless, keyless - 1)
    # ...and a bad key, which identifies nobody, is refused before any limiter (decision V3).
    bad = caller.get("/v1/corridors", headers={"X-API-Key": "tx_test_0123456789ab." + "A" * 43})
    assert_error(bad, 401, "unauthorized")
    assert_no_rate_limit_headers(bad)


@pytest.mark.spec(*LIMIT_RULES, "v1/errors/same-envelope-document-1")
def test_over_the_per_key_limit_it_is_429_until_the_window_reopens(
    sim: SimControl, limits: LimitSetter, keys: V1Keys, new_caller: Callable[[], Client]
) -> None:
    limits(tiers={"v1tiny": 3})
    caller = new_caller()
    key = keys.key("quotes:read", "webhooks:manage", tier="v1tiny")
    neighbour = keys.key("quotes:read")  # the same partner and client IP, its own budget
    for remaining in (2, 1, 0):
        resp = caller.get("/v1/corridors", headers=bearer(key))
        assert_data(resp)
        assert assert_rate_limit_headers(resp)[:2] == (3, remaining)
    _limited(caller.get("/v1/corridors", headers=bearer(key)), 3)
    # Whatever the operation: the budget is the key's.
    _limited(caller.post("/v1/webhooks", json=webhook_body(), headers=bearer(key)), 3)
    retry_after = _limited(caller.get("/v1/webhooks", headers=bearer(key)), 3)
    other = caller.get("/v1/corridors", headers=bearer(neighbour))
    assert_data(other)
    assert assert_rate_limit_headers(other)[:2] == (60, 59)
    sim.advance(retry_after)
    resp = caller.get("/v1/corridors", headers=bearer(key))
    assert_data(resp)
    assert assert_rate_limit_headers(resp)[:2] == (3, 2), "a new window starts full"


@pytest.mark.spec(*LIMIT_RULES)
def test_the_per_ip_ceiling_answers_before_authentication(
    limits: LimitSetter, keys: V1Keys, new_caller: Callable[[], Client]
) -> None:
    key = keys.key("quotes:read")
    limits(ip_backstop_per_minute=2)
    caller, neighbour = new_caller(), new_caller()
    assert_data(caller.get("/v1/corridors", headers=bearer(key)))
    assert_data(caller.get("/v1/status"))
    for resp in (
        caller.get("/v1/corridors", headers=bearer(key)),
        caller.get("/v1/corridors"),
        caller.get("/v1/status"),
    ):
        error = assert_error(resp, 429, "rate_limited")
        assert error["message"] == "Rate limit exceeded"
        assert_retry_after(resp, WINDOW_S)
        assert_no_rate_limit_headers(resp)  # nobody is identified yet
    # The health check and the document stay outside the ceiling: a load balancer's probes
    # are never throttled (docs/decisions.md C10).
    assert_data(caller.get("/v1/health"))
    assert caller.get("/v1/openapi.json").status == 200
    assert_data(neighbour.get("/v1/corridors", headers=bearer(key)))
