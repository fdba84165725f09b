"""v1 request-rate limits (spec 3 "Limits" item 1, "Errors" 429): the per-key limiter's
X-RateLimit-* headers on every response it handles (successes and errors alike), 429 with
Retry-After and the message "Rate limit exceeded", the default tier of 60 per minute, and the
per-IP ceiling before authentication.

Against any deployment a key's window is run out at the deployment's own limit (a key of the
test's own on a simulator, else the QA team's ``--spendable-key``) and waited back open. On a
simulator limits are also lowered through ``PUT /_sim/limits`` and restored afterwards
(windows emptied), to count exactly and to reach the per-IP ceiling, whose value the spec does
not show; requests leave from loopback addresses of the test's own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.calls.v1_calls import V1Keys, bearer, v1_keys, webhook_body
from conformance.deployment.sim_control import (
    SimControl,
)
from conformance.deployment.target import Target
from conformance.deployment.target_inputs import resolved_inputs
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


@pytest.fixture
def spendable(target: Target, keys: V1Keys) -> dict[str, Any]:
    """A key whose window this test may run out: one of its own on a simulator, else the
    given spendable key (no other test uses it)."""
    if target.controllable:
        return keys.key("quotes:read")
    given = resolved_inputs(target).spendable_key()
    assert given is not None, "needs('spendable_key') skips without one"
    return {"key": given.key}


@pytest.mark.needs("spendable_key", f"time<={WINDOW_S}s")
@pytest.mark.spec(*LIMIT_RULES, "v1/errors/same-envelope-document-1")
def test_a_keys_window_runs_out_then_reopens(
    target: Target, http: Client, keys: V1Keys, spendable: dict[str, Any]
) -> None:
    own_ip = is_loopback_url(target.base_url)
    caller = http.from_address(fresh_loopback_address()) if own_ip else http
    headers = bearer(spendable)
    # Start with room: a window an earlier run ran out is waited back open first.
    caller.with_headers(headers).paced().wait_for_room(4, probe="/v1/corridors")
    # Every response the limiter handles carries its headers: successes and errors alike.
    responses = [
        caller.get("/v1/corridors", headers=headers),  # 200
        caller.get("/v1/corridors", headers=headers, params={"chainId": "x"}),  # 400
        caller.get("/v1/webhooks", headers=headers),  # 200, or 403 without webhooks:manage
    ]
    assert [r.status for r in responses][:2] == [200, 400], [r.describe() for r in responses]
    assert responses[2].status in (200, 403), responses[2].describe()
    limit = _window(responses[0])
    for resp in responses:
        assert _window(resp) == limit, resp.describe()
    # Run the window out. Enforcement is per running instance, so a deployment of several may
    # let somewhat more through than the limit: bounded at three times it.
    for _ in range(3 * limit):
        resp = caller.get("/v1/corridors", headers=headers)
        if resp.status == 429:
            break
        assert_data(resp)
        assert _window(resp) == limit, resp.describe()
    else:
        pytest.fail(f"no 429 after {3 * limit} requests on a key limited to {limit} a minute")
    retry_after = _limited(resp, limit)
    # The budget is the key's: another key is served meanwhile, from the same client IP.
    neighbour = caller.with_headers(bearer(keys.key("quotes:read"))).paced()
    other = neighbour.get("/v1/corridors")
    assert_data(other)
    assert_rate_limit_headers(other)
    # Retry-After later the window has reopened.
    if target.controllable:
        target.sim().advance(retry_after)
    else:
        time.sleep(retry_after)
    resp = caller.get("/v1/corridors", headers=headers)
    assert_data(resp)
    assert _window(resp) == limit, resp.describe()


def _window(resp: Response) -> int:
    """The limit a response's X-RateLimit-* headers state, after checking that fewer than it
    remain and that the window resets within the minute."""
    limit, remaining, reset = assert_rate_limit_headers(resp)
    assert remaining < limit, resp.describe()
    assert 0 < reset <= WINDOW_S, resp.describe()
    return limit


@pytest.mark.sim_only(because="decision")  # exact counts, keyless per-IP budget (C9), V3
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


@pytest.mark.sim_only(because="deployment")  # a tier of 3 a minute, counted exactly
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


@pytest.mark.sim_only(because="deployment")  # the ceiling's value is not shown: lowered to 2
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
