"""The limiter is enforced per running instance (spec 1-rfq-v2 "Limits": "The limiter is enforced
per running instance, so the effective ceiling can sit slightly above the configured number";
decisions C16).

A second ``rfqsim serve`` is started next to the target, attached to the target's own chains
(``--rpc-url``, no makers): two instances of one venue, as behind a load balancer. With the
same keyless limit configured on both, one client IP gets the full budget from each instance:
its effective ceiling is twice the configured number, and neither instance counts the other's
calls.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.client import (
    Client,
    Response,
    fresh_loopback_address,
    is_loopback_url,
    on_one_connection,
)
from conformance.wire.response_checks import assert_data, assert_error, assert_rate_limit_headers
from conformance.wire.server import SimulatorProcess, find_rfqsim_bin


@pytest.fixture
def http(http: Client) -> Iterator[Client]:
    """One instance's counts and cache: conftest.py `on_one_connection`."""
    yield from on_one_connection(http)


CHAIN = 97
LIMIT = 3  # keyless requests per minute per client IP, on each instance


@pytest.fixture
def second_instance(request: pytest.FixtureRequest, target: Target) -> Iterator[Client]:
    """Another rfqsim on the target's chains; stopped (with its process group) afterwards."""
    if not target.started_by_harness and not is_loopback_url(target.base_url):
        pytest.skip("a second instance can only be started next to a local simulator")
    config = request.config
    executable = find_rfqsim_bin(config.getoption("--rfqsim-bin"), config.rootpath)
    attach = [
        arg
        for chain, url in sorted(target.rpc_urls.items())
        for arg in ("--rpc-url", f"{chain}={url}")
    ]
    process = SimulatorProcess(
        executable,
        seed=2,
        extra_args=["--no-makers", *attach],
        start_timeout=config.getoption("--rfqsim-start-timeout"),
        cwd=config.rootpath,
    )
    ready = process.start()
    try:
        yield Client(str(ready["api_url"]).rstrip("/"))
    finally:
        process.stop()


def _keyless_limit(sim: SimControl, limit: int) -> dict[str, int]:
    before = sim.limits()
    sim.set_limits(keyless_per_minute=limit, reset_windows=True)
    return {"keyless_per_minute": int(before["keyless_per_minute"])}


def _levels(client: Client) -> Response:
    return client.get("/v2/rfq/levels", params={"chainId": CHAIN})


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec(
    "rfq/limits/limiter-enforced-per-running",
    "rfq/limits/request-rate",
    "rfq/limits/rate-limit-headers-responses-handled",
    "rfq/errors/429-rate_limited",
)
def test_each_running_instance_counts_on_its_own(
    target: Target, sim: SimControl, http: Client, second_instance: Client
) -> None:
    if not is_loopback_url(target.base_url):
        pytest.skip("choosing the client IP needs a target on 127.0.0.0/8")
    other_sim = SimControl(second_instance)
    assert other_sim.info()["api_url"].rstrip("/") != target.base_url, "not a second instance"
    address = fresh_loopback_address()
    first, second = http.from_address(address), second_instance.from_address(address)
    restore = [_keyless_limit(sim, LIMIT), _keyless_limit(other_sim, LIMIT)]
    try:
        # The first instance's budget for this client IP, spent to the last call ...
        for left in range(LIMIT - 1, -1, -1):
            resp = _levels(first)
            assert_data(resp)
            assert assert_rate_limit_headers(resp)[:2] == (LIMIT, left), resp.headers
        assert_error(_levels(first), 429, "rate_limited")
        # ... while the second instance has counted none of it: the same client IP gets its
        # whole budget again there, so the venue's effective ceiling is above the configured
        # number.
        for left in range(LIMIT - 1, -1, -1):
            resp = _levels(second)
            assert_data(resp)
            assert assert_rate_limit_headers(resp)[:2] == (LIMIT, left), resp.headers
        assert_error(_levels(second), 429, "rate_limited")
        # And spending it there gave nothing back here.
        assert_error(_levels(first), 429, "rate_limited")
    finally:
        sim.set_limits(**restore[0], reset_windows=True)
        other_sim.set_limits(**restore[1], reset_windows=True)
