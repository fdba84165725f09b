"""The limits as any client meets them on a deployment whose limits it cannot change: the
keyless budget of 60 requests a minute per client IP really spent (61 requests), its 429 with
Retry-After, the window reopening after the wait the service named, a key's budget of its own,
and the outstanding-RFQ cap really reached by holding 4 firm quotes. Nothing here changes a
limit; on a simulator the wait the service named is a move of its clock (the windows run on
it), elsewhere it is waited out in real time. The tests that lower limits to test the same
rules faster are in test_rate_limits.py and test_rfq_concurrency.py. The per-client-IP
ceiling before authentication (its value not shown) is reached for real too, from a client IP
of the test's own, with a key nobody issued.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.calls.control import Janitor
from conformance.calls.rfq_calls import eoa_proof, rfq_body
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client, Response, fresh_loopback_address, on_one_connection
from conformance.wire.response_checks import (
    RATE_LIMIT_HEADERS,
    assert_data,
    assert_error,
    assert_no_rate_limit_headers,
    assert_rate_limit_headers,
    assert_retry_after,
)
from rfqkit.wallets import Wallet


@pytest.fixture
def http(http: Client) -> Iterator[Client]:
    """One instance's counts and cache: conftest.py `on_one_connection`."""
    yield from on_one_connection(http)


KEYLESS_PER_MINUTE = 60  # spec 1 "Limits": without a key the same 60/min per client IP
OUTSTANDING_CAP = 4  # spec 1 "Limits": 4 per API key, or per client IP without a key
WINDOW_SECONDS = 60


def _levels(client: Client, chain_id: int) -> Response:
    return client.get("/v2/rfq/levels", params={"chainId": chain_id})


def _spend_the_window(caller: Client, chain_id: int) -> Response:
    """Calls until the service refuses one; every answer before it counts down by one."""
    previous: int | None = None
    for _ in range(KEYLESS_PER_MINUTE + 1):
        resp = _levels(caller, chain_id)
        if resp.status == 429:
            assert previous == 0, f"429 with {previous} left: {resp.describe()}"
            return resp
        assert_data(resp)
        limit, remaining, reset = assert_rate_limit_headers(resp)
        assert limit == KEYLESS_PER_MINUTE, f"keyless ceiling {limit}, spec: 60 a minute"
        assert 0 < reset <= WINDOW_SECONDS, resp.headers
        if previous is not None:
            assert remaining == previous - 1, f"remaining {remaining} after {previous}"
        previous = remaining
    raise AssertionError(f"{KEYLESS_PER_MINUTE + 1} calls in a minute and no 429")


@pytest.mark.needs("time<=65s")
@pytest.mark.spec(
    "rfq/limits/request-rate",
    "rfq/limits/rate-limit-headers-responses-handled",
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/errors/429-rate_limited",
    "rfq/errors/429-502-503-transient",
    "rfq/errors/envelope",
)
def test_the_sixty_first_keyless_call_of_a_minute_is_429_until_retry_after(
    target: Target, caller: Client, chain: VenueChain
) -> None:
    refused = _spend_the_window(caller, chain.chain_id)
    assert_error(refused, 429, "rate_limited")
    retry_after = assert_retry_after(refused, WINDOW_SECONDS)
    limit, remaining, _ = assert_rate_limit_headers(refused)
    assert (limit, remaining) == (KEYLESS_PER_MINUTE, 0), refused.headers
    if target.controllable:
        target.sim().advance(retry_after)
    else:
        time.sleep(retry_after)
    reopened = _levels(caller, chain.chain_id)
    assert_data(reopened)
    assert assert_rate_limit_headers(reopened)[1] < KEYLESS_PER_MINUTE, reopened.headers


@pytest.mark.needs("key:trades")
@pytest.mark.spec(
    "rfq/auth/api-keys/key-gives-own-rate-limit",
    "rfq/limits/request-rate",
    "rfq/limits/rate-limit-headers-responses-handled",
)
def test_a_key_spends_its_own_budget_not_the_client_ips(
    caller: Client, chain: VenueChain, trades_key: dict[str, str]
) -> None:
    keyless = [_levels(caller, chain.chain_id) for _ in range(2)]
    keyed = [_levels(caller.with_headers(trades_key), chain.chain_id) for _ in range(2)]
    ip_left = [assert_rate_limit_headers(assert_ok(r))[1] for r in keyless]
    key_left = [assert_rate_limit_headers(assert_ok(r))[1] for r in keyed]
    assert ip_left[1] == ip_left[0] - 1, ip_left
    assert key_left[1] == key_left[0] - 1, key_left
    after = assert_rate_limit_headers(assert_ok(_levels(caller, chain.chain_id)))[1]
    assert after == ip_left[1] - 1, "the keyed calls left the client IP's bucket alone"


def assert_ok(resp: Response) -> Response:
    assert_data(resp)
    return resp


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/limits/outstanding-rfqs",
    "rfq/limits/slot-lifetime",
    "rfq/errors/429-rate_limited",
    "rfq/states/quoted-post-v2-rfq-id-cancel",
)
def test_a_fifth_live_quote_of_one_client_ip_is_429_without_retry_after(
    caller: Client, chain: VenueChain, source: Wallet, clock: ServiceClock, kept: Janitor
) -> None:
    usdt = chain.token("USDT")
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=usdt.units(chain.min_size * 2),
        taker=source.address,
        proof=eoa_proof(clock, source, chain.chain_id),
    )
    held = []
    for _ in range(OUTSTANDING_CAP):
        data = assert_data(caller.post("/v2/rfq/request", json=body, timeout=75))
        if data.get("status") != "quoted":
            pytest.skip(f"the venue did not quote the minimum size: {data!r}")
        held.append(kept.keep(caller, data))
    refused = caller.post("/v2/rfq/request", json=body, timeout=75)
    assert_error(refused, 429, "rate_limited")
    assert refused.headers.get("Retry-After") is None, "never Retry-After on the cap's 429"
    # Cancel gives the inventory back but not the slot: still over the cap.
    first = held[0]
    cancelled = caller.post(
        f"/v2/rfq/{first['rfqId']}/cancel", headers={"X-Rfq-Claim": first["claimToken"]}
    )
    assert assert_data(cancelled)["status"] == "released"
    assert_error(caller.post("/v2/rfq/request", json=body, timeout=75), 429, "rate_limited")


# -- the per-IP ceiling before authentication, really reached ---------------------------------

# Its value is not shown (spec 1 "Limits"); a brute-force backstop that lets this many requests
# of one client IP through in a minute would not be one, so not meeting it by then fails.
CEILING_BOUND = 5000
SPENDERS = 8  # parallel senders: the window is a minute, a loaded machine is slow
UNKNOWN_KEY = {"Authorization": "Bearer tx_test_000000000000.conformance-unknown-key"}


def _reach_the_ceiling(caller: Client, path: str) -> Response:
    """Requests with a key nobody issued, from ``caller``'s client IP, until the ceiling answers:
    every earlier answer is the bad key's 401, without X-RateLimit-* (nobody identified). The
    first 429."""
    stop = threading.Event()
    sent = itertools.count()
    refused: list[Response] = []
    wrong: list[str] = []

    def spend() -> None:
        while not stop.is_set() and next(sent) < CEILING_BOUND:
            resp = caller.get(path, headers=UNKNOWN_KEY)
            if resp.status == 429:
                refused.append(resp)
                stop.set()
            elif resp.status != 401 or any(h in resp.headers for h in RATE_LIMIT_HEADERS):
                wrong.append(f"{resp.describe()}: {resp.raw[:200]!r} {resp.headers!r}")
                stop.set()

    with ThreadPoolExecutor(SPENDERS) as pool:
        for future in [pool.submit(spend) for _ in range(SPENDERS)]:
            future.result()
    assert not wrong, wrong[0]
    assert refused, f"{CEILING_BOUND} requests of one client IP and no 429"
    return refused[0]


def _assert_ceiling(resp: Response) -> None:
    """The backstop's 429: the envelope, Retry-After, no X-RateLimit-* (caller unknown)."""
    assert_error(resp, 429, "rate_limited")
    assert_retry_after(resp, WINDOW_SECONDS)
    assert_no_rate_limit_headers(resp)


@pytest.mark.needs("loopback")
@pytest.mark.spec(
    "rfq/limits/per-ip-ceiling-before-authentication",
    "rfq/limits/absent-responses-rejected-earlier",
    "rfq/limits/retry-after-set-two-time-window",
    "rfq/errors/429-rate_limited",
    "ramp/errors/429-rate_limited",
    "ramp/limits/rate-limit",
    "ramp/errors/429-502-transient-400",
)
def test_the_per_ip_ceiling_is_met_before_authentication_and_shared_by_the_ramp(
    caller: Client, http: Client, chain: VenueChain
) -> None:
    _assert_ceiling(_reach_the_ceiling(caller, "/v2/rfq/rfq_conformance_backstop"))
    # Every /v2 call from that IP is refused now, keyless or keyed, before anyone is identified;
    # the ramp shares the ceiling (spec 2 "Limits": shared with the rest of /v2).
    _assert_ceiling(_levels(caller, chain.chain_id))
    _assert_ceiling(caller.get("/v2/ramp/providers"))
    # Another client IP has a ceiling of its own.
    assert_data(_levels(http.from_address(fresh_loopback_address()), chain.chain_id))


@pytest.mark.needs("loopback")
@pytest.mark.spec("v1/errors/429-rate_limited")
def test_the_v1_per_ip_backstop_says_rate_limit_exceeded(caller: Client) -> None:
    refused = _reach_the_ceiling(caller, "/v1/corridors")
    _assert_ceiling(refused)
    assert refused.json()["error"]["message"] == "Rate limit exceeded"  # spec 3 "Errors"
