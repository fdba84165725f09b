"""The ramp's general policies: no outbound ramp events for integrators (docs/ramp.md RA27), a
create that takes longer than a short client timeout still answers inside the 30 seconds the
spec tells clients to allow, and the ramp lives only under /v2/ramp with no deprecation announced
(RA29)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from conformance.calls.ramp import CALL_CAPABILITIES, Ramp, fresh_wallet
from conformance.calls.ramp_transfers import Transfers
from conformance.deployment.key_source import KeySource
from conformance.deployment.target import Target
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_error, assert_issues

CLIENT_TIMEOUT_S = 30  # spec "Limits": client timeout for POST /v2/ramp/transfers, 30 s or more
PROVIDER_LATENCY_MS = 1500  # every provider answer held this long (sandbox `apiLatencyMs`)
RAMP_EVENT_TYPES = ("ramp.transfer.updated", "ramp.transfer.completed", "transfer.updated")


@pytest.fixture
def manager(target: Target, http: Client) -> Iterator[Client]:
    """A client with a webhooks key: made through /_sim (revoked after), else a given one."""
    source = KeySource(target, "ramp")
    try:
        key = source.make("test", ["webhooks:manage"])
        client = http.with_headers({"Authorization": f"Bearer {key['key']}"})
        yield client if target.controllable else client.paced()
    finally:
        source.close()


@pytest.mark.spec("ramp/events/item-3", "ramp/events/item-2")
def test_integrators_are_offered_no_ramp_events(http: Client, manager: Client) -> None:
    # The registry's event types (the v2 document's enum) are the RFQ and v1 events only.
    document = http.get("/v2/openapi.json").json()
    offered = set(
        document["components"]["schemas"]["WebhookCreate"]["properties"]["eventTypes"]["items"][
            "enum"
        ]
    )
    assert offered, document["components"]["schemas"]["WebhookCreate"]
    assert not [t for t in offered if "ramp" in t or t.startswith("transfer.")], offered
    # And the registry refuses to subscribe to one: 400 naming eventTypes.
    for event_type in RAMP_EVENT_TYPES:
        body = {"url": "https://127.0.0.1:9/hook", "eventTypes": [event_type]}
        error = assert_error(manager.post("/v1/webhooks", json=body), 400, "invalid_request")
        assert_issues(error, "eventTypes")


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec("ramp/limits/client-timeout-for-post-v2-ramp-transfers")
def test_a_slow_create_still_answers_within_the_client_timeout(ramp: Ramp) -> None:
    transfers = Transfers(ramp)
    wallet = fresh_wallet()
    ramp.verified(wallet)
    with ramp.restoring():
        ramp.configure(apiLatencyMs=PROVIDER_LATENCY_MS)
        calls_before = ramp.calls(CALL_CAPABILITIES)
        started = time.monotonic()
        created = transfers.create(transfers.body(wallet, "buy"))
        elapsed = time.monotonic() - started
        assert ramp.calls(CALL_CAPABILITIES) > calls_before, "the create asked the provider"
    assert created.transfer["status"] == "AWAITING_FUNDS", created.transfer
    # Several provider round trips, each held 1.5 s: longer than a short client timeout would
    # allow, and inside the 30 s the spec tells clients to wait.
    assert PROVIDER_LATENCY_MS / 1000 * 2 <= elapsed < CLIENT_TIMEOUT_S, elapsed


@pytest.mark.spec(
    "ramp/versioning/deprecation-policy-ramp-not",
    "ramp/versioning/ramp-lives-only-under",
)
def test_the_ramp_lives_under_v2_only_and_announces_no_deprecation(http: Client) -> None:
    providers = http.get("/v2/ramp/providers")
    assert providers.status == 200, providers.describe()
    banks = http.get("/v2/ramp/banks", params={"provider": "no-such-provider"})
    assert banks.status == 404, banks.describe()
    for resp in (providers, banks):
        for header in ("Deprecation", "Sunset"):
            assert header not in resp.headers, f"{header}: {resp.headers}"
        links = " ".join(resp.headers.get_all("Link")).lower()
        for word in ("deprecation", "sunset"):
            assert word not in links, links
    # Only under /v2/ramp: not at /v1/ramp, not at the root, not under /v2 without "ramp".
    for path in ("/v1/ramp/providers", "/ramp/providers", "/v2/providers"):
        assert_error(http.get(path), 404, "not_found")
    document = http.get("/v2/openapi.json").json()
    ramp_paths = [p for p in document["paths"] if "ramp" in p]
    assert ramp_paths, sorted(document["paths"])
    assert all(p.startswith("/v2/ramp/") for p in ramp_paths), ramp_paths
